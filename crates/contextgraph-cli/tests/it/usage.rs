//! The command-line contract: help with examples and exit codes on stdout,
//! usage errors on stderr with exit 2, failures on stderr with exit 1,
//! `NO_COLOR` respected, and a closed stdout never a panic.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn cgp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("run cgp")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_goes_to_stdout_with_examples_and_exit_codes() {
    let out = cgp(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    for needle in [
        "Examples:",
        "cgp serve docs ./docs",
        "Exit codes:",
        "2  usage error",
        "NO_COLOR",
    ] {
        assert!(help.contains(needle), "{needle:?} missing from:\n{help}");
    }
    assert!(out.stderr.is_empty());
    let docs_help = text(&cgp(&["serve", "docs", "--help"]).stdout);
    assert!(
        docs_help.contains("<DIR>") && docs_help.contains("--max-file-bytes"),
        "{docs_help}"
    );
}

#[test]
fn version_goes_to_stdout() {
    let out = cgp(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("cgp "));
}

#[test]
fn usage_errors_exit_two_with_the_message_on_stderr() {
    for args in [
        &[][..],
        &["bogus"],
        &["serve"],
        &["serve", "docs"],
        &["serve", "docs", "a", "b"],
        &["serve", "docs", "x", "--max-file-bytes", "lots"],
    ] {
        let out = cgp(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "cgp {args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "cgp {args:?} wrote to stdout");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("Usage") || stderr.contains("try '--help'"),
            "cgp {args:?}: {stderr}"
        );
    }
}

#[test]
fn a_folder_that_cannot_be_served_exits_one_naming_the_provider_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing-docs");
    let out = cgp(&["serve", "docs", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "stdout is for protocol data only");
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
    for needle in [
        "contextgraph-provider-docs",
        "missing-docs",
        "pass an existing",
    ] {
        assert!(stderr.contains(needle), "{needle:?} missing from {stderr}");
    }
}

fn stderr_with_env(env: &[(&str, &str)], args: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cgp"));
    command
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    for (k, v) in env {
        command.env(k, v);
    }
    text(&command.output().expect("run cgp").stderr)
}

#[test]
fn no_color_wins_over_forced_colour_in_errors_and_usage() {
    const ESC: &str = "\x1b[";
    for args in [&["serve", "docs", "/nonexistent-cgp-dir"][..], &["bogus"]] {
        let forced = stderr_with_env(&[("CLICOLOR_FORCE", "1")], args);
        assert!(
            forced.contains(ESC),
            "forced colour shows escapes for {args:?}: {forced:?}"
        );
        let plain = stderr_with_env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], args);
        assert!(
            !plain.contains(ESC),
            "NO_COLOR must strip colour for {args:?}: {plain:?}"
        );
        let piped = stderr_with_env(&[], args);
        assert!(
            !piped.contains(ESC),
            "no colour when stderr is not a terminal: {piped:?}"
        );
    }
}

#[test]
fn a_closed_stdout_pipe_ends_serving_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(["serve", "docs"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cgp");
    // Close our read end before the provider has anything to write: its
    // reply to the handshake then meets a broken pipe.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin
        .write_all(b"{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}\n");
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "the host hung up; that is not a failure: {stderr}"
    );
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_does_not_make_help_panic() {
    let out = Command::new("sh")
        .arg("-c")
        .arg("exec 1>&-; \"$0\" --help")
        .arg(env!("CARGO_BIN_EXE_cgp"))
        .output()
        .expect("run sh");
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(
        out.status.code(),
        Some(101),
        "101 is Rust's panic exit code"
    );
}
