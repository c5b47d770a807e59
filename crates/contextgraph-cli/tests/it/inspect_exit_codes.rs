//! `cgp inspect`'s contract: 0 when nothing failed, 1 when a check failed
//! (the report on stdout, a one-line summary on stderr), 2 on usage errors,
//! `--strict` failing on skips, and a closed stdout never a panic.

use crate::common::inspect;

use std::process::{Command, Stdio};

#[cfg(feature = "test-fixtures")]
#[test]
fn a_failed_check_exits_one_with_the_report_on_stdout() {
    let bin = inspect::misbehaving_binary();
    let out = inspect::cgp([
        "inspect".as_ref(),
        "stdio".as_ref(),
        "--".as_ref(),
        bin.as_os_str(),
        "--mode".as_ref(),
        "bad-score".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = inspect::text(&out.stdout);
    assert!(stdout.contains("FAIL  frame-validity"), "{stdout}");
    assert!(stdout.contains("F1 at score"), "{stdout}");
    assert!(stdout.contains("verdict: FAIL"), "{stdout}");
    let stderr = inspect::text(&out.stderr);
    assert!(stderr.contains("1 check(s) failed"), "{stderr}");
}

#[test]
fn strict_fails_on_skips_that_a_lax_run_accepts() {
    // A folder no goal matches (neither --goal nor the built-in ones), so
    // every frame check is skipped: nothing failed, but nothing was judged.
    let folder = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(
        folder.path().join("zebra.md"),
        "# Zebras\n\nStripes on savannah grazers.\n",
    )
    .expect("write a document");
    let docs = inspect::docs_command();
    let run = |strict: &str| {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "inspect".as_ref(),
            "stdio".as_ref(),
            "--json".as_ref(),
            strict.as_ref(),
            "--goal".as_ref(),
            "xyzzy plugh".as_ref(),
            "--".as_ref(),
        ];
        args.extend(docs.iter().map(|a| a.as_os_str()));
        args.push(folder.path().as_os_str());
        inspect::cgp(args)
    };
    let lax = run("--timeout-ms=5000");
    let report: serde_json::Value = serde_json::from_slice(&lax.stdout).expect("JSON on stdout");
    assert!(
        report["summary"]["skipped"].as_u64().unwrap_or(0) >= 5,
        "{report}"
    );
    assert_eq!(report["summary"]["failed"].as_u64(), Some(0), "{report}");
    assert_eq!(lax.status.code(), Some(0), "{report}");
    let strict = run("--strict");
    assert_eq!(strict.status.code(), Some(1));
    let stderr = inspect::text(&strict.stderr);
    assert!(stderr.contains("skipped under --strict"), "{stderr}");
}

#[test]
fn usage_errors_exit_two() {
    for args in [
        &["inspect"][..],
        &["inspect", "stdio"],
        &["inspect", "stdio", "--strict"],
        &["inspect", "stdio", "--timeout-ms", "soon", "--", "x"],
        &["inspect", "http"],
        &["inspect", "carrier-pigeon"],
    ] {
        let out = inspect::cgp(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            inspect::text(&out.stderr)
        );
        assert!(out.stdout.is_empty() || args.len() == 1, "{args:?}");
    }
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    let folder = inspect::markdown_folder();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(["inspect", "stdio", "--"])
        .args(inspect::docs_command())
        .arg(folder.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cgp");
    // Close the read end before cgp has anything to write.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("cgp ends");
    let stderr = inspect::text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
