//! `normal`: shutdown (R2) exits 0 promptly, and the built-in corpus leaves
//! nothing behind.

use crate::common;

use common::{corpus_files, frames_of, roomy_query, vanish, Provider, EXIT_DEADLINE};

#[test]
fn r2_shutdown_exits_zero_and_leaves_nothing_behind() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let result = frames_of(&p.query("q", &roomy_query()), "q");
    let files = corpus_files(&result);
    assert!(files.iter().all(|f| f.exists()));
    assert_eq!(p.shutdown().code(), Some(0));
    assert!(vanish(&files, EXIT_DEADLINE), "{files:?} left behind");
    assert_eq!(p.temp_entries(), Vec::<std::path::PathBuf>::new());
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
