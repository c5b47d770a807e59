//! `cgp inspect host`: this build's host and composer against the host
//! suite's adversaries (the stdio ones are `cgp` itself, re-run as one by
//! an environment variable, no command), green under `--strict`, with the
//! documented JSON report and exit codes.

use std::process::{Command, Output, Stdio};

fn cgp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("cgp runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn inspect_host_strict_json_is_green_and_has_the_report_shape() {
    let out = cgp(&["inspect", "host", "--strict", "--json"]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("only JSON on stdout");
    assert_eq!(report["target"], "host");
    assert_eq!(report["verdict"], "pass");
    let checks = report["checks"].as_array().expect("checks");
    let names: Vec<&str> = checks.iter().filter_map(|c| c["name"].as_str()).collect();
    for needed in [
        "version-reject",
        "identity-reject",
        "budget-drop",
        "frame-limit",
        "consent-gate",
        "scope-receipt",
        "provenance-bytes",
        "content-quoting",
        "composition-audit",
        "crash-isolation",
        "wire-noise",
        "correlation-ids",
        "lockstep-resync",
        "hang-timeout",
        "line-cap",
        "shutdown",
    ] {
        assert!(names.contains(&needed), "{needed} missing from {names:?}");
    }
    for c in checks {
        assert_eq!(c["status"], "pass", "{c}");
        assert!(!c["anchors"].as_array().expect("anchors").is_empty(), "{c}");
    }
}

#[test]
fn inspect_host_text_report_names_each_check_and_the_verdict() {
    let out = cgp(&["inspect", "host"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("cgp inspect: host"), "{stdout}");
    assert!(stdout.contains("host under test:"), "{stdout}");
    assert!(stdout.contains("PASS  consent-gate [C1 C2]"), "{stdout}");
    assert!(stdout.contains("verdict: PASS"), "{stdout}");
}

#[test]
fn inspect_host_usage_errors_exit_two() {
    let out = cgp(&["inspect", "host", "--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--frobnicate"));
}

#[test]
fn inspect_host_help_shows_examples() {
    let out = cgp(&["inspect", "host", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("cgp inspect host --strict --json"));
}

#[test]
fn the_adversaries_have_no_command_and_serve_only_when_the_suite_asks() {
    // No `cgp inspect adversary` any more: a usage error.
    let gone = cgp(&["inspect", "adversary", "--", "--list-modes"]);
    assert_eq!(gone.status.code(), Some(2));
    // Re-run the way `cgp inspect host` does, cgp serves its adversaries.
    let adversary = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cgp"))
            .args(args)
            .env(
                contextgraph_conformance_host::stdio_adversary::ADVERSARY_ENV,
                contextgraph_conformance_host::stdio_adversary::ADVERSARY_ENV_VALUE,
            )
            .output()
            .expect("run cgp")
    };
    let out = adversary(&["--list-modes"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).lines().any(|l| l == "crash-on-query"));
    let bad = adversary(&["--mode", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
}
