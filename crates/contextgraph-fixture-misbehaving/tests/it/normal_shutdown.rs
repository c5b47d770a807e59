//! `normal`: shutdown (R2) exits 0 promptly, and the built-in corpus's
//! scratch folder is deleted on the way out.

use crate::common;

use common::{frames_of, roomy_query, scratch_dir, vanishes, Provider, EXIT_DEADLINE};

#[test]
fn r2_shutdown_exits_zero_and_deletes_the_scratch_corpus() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let result = frames_of(&p.query("q", &roomy_query()), "q");
    let scratch = scratch_dir(&result);
    assert!(scratch.exists());
    assert_eq!(p.shutdown().code(), Some(0));
    assert!(
        vanishes(&scratch, EXIT_DEADLINE),
        "{} left behind",
        scratch.display()
    );
}

#[test]
fn r2_end_of_input_also_exits_zero() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    p.close_stdin();
    let status = p.wait_exit(EXIT_DEADLINE).expect("exits at end of input");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn r2_in_flight_queries_are_answered_before_exit() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    for i in 0..6 {
        p.send(
            &serde_json::json!({"type": "query", "id": format!("q{i}"), "query": roomy_query()}),
        );
    }
    p.send(&serde_json::json!({"type": "shutdown"}));
    for _ in 0..6 {
        assert_eq!(p.recv_valid()["type"], "frames");
    }
    assert_eq!(p.wait_exit(EXIT_DEADLINE).and_then(|s| s.code()), Some(0));
}
