//! `cgp serve docs <DIR> --http 127.0.0.1:0` end to end: the real binary
//! announces its URL on stderr (`cgp serve: listening on <URL>`), `cgp
//! inspect http <URL> --strict` passes against it, and SIGTERM stops it
//! cleanly (exit 0).

use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::serve_http::{sigterm, spawn_announced};

const CGP: &str = env!("CARGO_BIN_EXE_cgp");
const PATIENCE: Duration = Duration::from_secs(60);

fn docs_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("retry.md"),
        "# Retry policy\n\nRequests are retried with exponential backoff.\n\n## Timeouts\n\nEach attempt has a 30 second timeout.\n",
    )
    .unwrap();
    dir
}

/// Start `cgp serve docs DIR --http 127.0.0.1:0 EXTRA…`; return the child,
/// the announced URL, and the rest of stderr (collected by a thread).
fn start(dir: &tempfile::TempDir, extra: &[&str]) -> (Child, String, mpsc::Receiver<String>) {
    let mut command = Command::new(CGP);
    command
        .args(["serve", "docs"])
        .arg(dir.path())
        .args(["--http", "127.0.0.1:0"])
        .args(extra);
    spawn_announced(command)
}

#[test]
fn serve_docs_over_http_announces_its_url_and_passes_inspect_http_strict() {
    let dir = docs_folder();
    let (mut child, url, rest) = start(&dir, &[]);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/cgp"),
        "{url}"
    );
    assert!(
        !url.ends_with(":0/cgp"),
        "the real port is announced: {url}"
    );
    let inspect = Command::new(CGP)
        .args(["inspect", "http", &url, "--strict", "--timeout-ms", "10000"])
        .output()
        .unwrap();
    assert!(
        inspect.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&inspect.stdout),
        String::from_utf8_lossy(&inspect.stderr)
    );
    sigterm(&child);
    let status = child.wait().unwrap();
    assert!(status.success(), "SIGTERM is a clean stop: {status:?}");
    let log = rest.recv_timeout(PATIENCE).unwrap();
    assert!(log.contains("status=200"), "{log}");
    assert!(log.contains("shutting down"), "{log}");
    assert!(
        !log.contains("exponential backoff"),
        "no content in logs: {log}"
    );
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert!(stdout.is_empty(), "nothing on stdout over HTTP: {stdout}");
}

#[test]
fn c8_with_a_token_from_a_file_unauthenticated_inspect_fails_and_logs_no_token() {
    let dir = docs_folder();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "file-token-0123456789\n").unwrap();
    let (mut child, url, rest) = start(&dir, &["--token-file", token_file.to_str().unwrap()]);
    let inspect = Command::new(CGP)
        .args(["inspect", "http", &url, "--timeout-ms", "10000"])
        .output()
        .unwrap();
    assert_eq!(inspect.status.code(), Some(1), "no token: the suite fails");
    sigterm(&child);
    assert!(child.wait().unwrap().success());
    let log = rest.recv_timeout(PATIENCE).unwrap();
    assert!(log.contains("status=401"), "{log}");
    assert!(
        !log.contains("file-token"),
        "the token never reaches a log: {log}"
    );
}

#[test]
fn c7_a_public_address_without_tls_and_token_is_refused_with_exit_1() {
    let dir = docs_folder();
    let out = Command::new(CGP)
        .args(["serve", "docs"])
        .arg(dir.path())
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("C7") && stderr.contains("--insecure-public"),
        "{stderr}"
    );
}

#[test]
fn http_flags_without_http_are_a_usage_error() {
    let dir = docs_folder();
    let out = Command::new(CGP)
        .args(["serve", "docs"])
        .arg(dir.path())
        .args(["--token-env", "CGP_TOKEN"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_unset_token_variable_names_the_variable_and_exits_1() {
    let dir = docs_folder();
    let out = Command::new(CGP)
        .args(["serve", "docs"])
        .arg(dir.path())
        .args([
            "--http",
            "127.0.0.1:0",
            "--token-env",
            "CGP_TEST_SURELY_UNSET_TOKEN",
        ])
        .env_remove("CGP_TEST_SURELY_UNSET_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("CGP_TEST_SURELY_UNSET_TOKEN"));
}
