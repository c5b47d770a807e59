//! R2 over real pipes: `shutdown` ends the process with status 0 promptly;
//! so does the host closing stdin.

use crate::common::{docs_fixture, start, DOCS_BIN, EXIT_DEADLINE};
use serde_json::json;

#[test]
fn r2_shutdown_exits_with_status_zero() {
    let (_dir, mut session) = start(DOCS_BIN, &[]);
    session.send(&json!({"type": "shutdown"}));
    let status = session
        .wait_exit(EXIT_DEADLINE)
        .expect("R2: exited after shutdown");
    assert!(status.success(), "{status}");
    assert!(
        session.stdout_closed_within(EXIT_DEADLINE),
        "nothing is sent after shutdown"
    );
}

#[test]
fn r2_end_of_input_exits_with_status_zero() {
    let (_dir, mut session) = start(DOCS_BIN, &[]);
    session.close_stdin();
    let status = session
        .wait_exit(EXIT_DEADLINE)
        .expect("exited at end of input");
    assert!(status.success(), "{status}");
}

#[test]
fn a_folder_that_does_not_exist_fails_with_status_one_and_a_message() {
    let dir = docs_fixture();
    let missing = dir.path().join("no-such-folder");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_contextgraph-provider-docs"))
        .arg(&missing)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "stdout carries protocol only");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("contextgraph-provider-docs") && stderr.contains("no-such-folder"),
        "{stderr}"
    );
}

#[test]
fn a_missing_argument_is_a_usage_error_with_status_two() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_contextgraph-provider-docs"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage"));
}
