//! Robustness misbehaviours: `crash-on-query` and `crash-on-garbage` (R1),
//! `wrong-error-code` (R1's bad_request), `hang-on-shutdown` (R2).

use crate::common;

use common::{corpus_files, frames_of, roomy_query, vanish, Provider, EXIT_DEADLINE};
use serde_json::json;

#[test]
fn r1_crash_on_query_exits_3_with_a_message_and_cleans_up() {
    let mut p = Provider::mode("crash-on-query", &[]);
    let scratch = p.serving_dir();
    p.handshake();
    p.send(&json!({"type": "query", "id": "q1", "query": roomy_query()}));
    assert_eq!(p.next_item(), None, "no reply: stdout closes");
    let status = p.wait_exit(EXIT_DEADLINE).expect("exits");
    assert_eq!(status.code(), Some(3));
    assert!(
        p.final_stderr().contains("crash-on-query"),
        "{}",
        p.final_stderr()
    );
    assert!(!scratch.exists(), "{} left behind", scratch.display());
    assert_eq!(p.temp_entries(), Vec::<std::path::PathBuf>::new());
}

#[test]
fn r1_crash_on_garbage_exits_on_a_malformed_line() {
    let mut p = Provider::mode("crash-on-garbage", &[]);
    p.handshake();
    p.send_line("not json at all");
    assert_eq!(p.next_item(), None, "no bad_request: stdout closes");
    assert_eq!(p.wait_exit(EXIT_DEADLINE).and_then(|s| s.code()), Some(3));
}

#[test]
fn r1_wrong_error_code_answers_malformed_input_with_internal() {
    let mut p = Provider::mode("wrong-error-code", &[]);
    p.handshake();
    p.send_line("not json at all");
    let reply = p.recv_valid();
    assert_eq!(
        (reply["type"].as_str(), reply["code"].as_str()),
        (Some("error"), Some("internal"))
    );
    p.send(&json!({"type": "ping", "id": "p1"}));
    assert_eq!(p.recv_valid()["code"], "internal");
    // Still alive and otherwise normal.
    frames_of(&p.query("q", &roomy_query()), "q");
}

#[test]
fn r2_hang_on_shutdown_keeps_serving_after_shutdown_and_never_exits() {
    let mut p = Provider::mode("hang-on-shutdown", &[]);
    p.handshake();
    let files = corpus_files(&frames_of(&p.query("q1", &roomy_query()), "q1"));
    p.send(&json!({"type": "shutdown"}));
    // Shutdown was ignored: the next query is still answered.
    frames_of(&p.query("q2", &roomy_query()), "q2");
    p.close_stdin();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(p.is_running(), "it must never exit by itself");
    // Only a kill ends it, and the kill leaves nothing behind.
    p.kill();
    assert!(vanish(&files, EXIT_DEADLINE), "{files:?} left behind");
    assert_eq!(p.temp_entries(), Vec::<std::path::PathBuf>::new());
}
