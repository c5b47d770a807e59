//! `cgp bridge mcp -- <server>` end to end: the real binary bridging the
//! fixture MCP server (the testkit's `mcp_fixture_server`, built as this
//! package's `cgp-fixture-mcp-server` test-fixture binary),
//! driven over CGP stdio, then certified by the conformance suite.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use contextgraph_conformance::{run_suite, Status, SuiteOptions, Target};
use contextgraph_testkit::assert_line_schema_valid;
use serde_json::{json, Value};

/// The fixture MCP server: this package's `cgp-fixture-mcp-server`
/// test-fixture binary (the testkit's `mcp_fixture_server`).
fn fixture_server() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cgp-fixture-mcp-server"))
}

fn notes() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("retry.md"),
        "# Retry policy\n\nThe client retries three times with exponential backoff.\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("config.rs"),
        "/// Loads the retry policy from the config file.\npub fn load_config(path: &str) -> Config {\n    Config::parse(path)\n}\n",
    )
    .unwrap();
    dir
}

fn bridge_args(dir: &Path, flags: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec!["bridge".into(), "mcp".into()];
    args.extend(flags.iter().map(|s| (*s).to_owned()));
    args.push("--".into());
    args.push(fixture_server().display().to_string());
    args.push(dir.display().to_string());
    args
}

/// Send `lines` to a bridge, close stdin, and collect every reply line.
fn session(dir: &Path, lines: &[Value]) -> (Vec<Value>, std::process::ExitStatus) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(bridge_args(dir, &[]))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut replies = Vec::new();
    let mut reader = stdout.lines();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        if line["type"] == "shutdown" {
            break;
        }
        let reply = reader.next().expect("a reply line").unwrap();
        assert_line_schema_valid(reply.as_bytes());
        replies.push(serde_json::from_str(&reply).unwrap());
    }
    drop(stdin);
    assert!(reader.next().is_none(), "nothing after shutdown");
    (replies, child.wait().unwrap())
}

#[test]
fn handshake_query_verify_and_shutdown_over_stdio_are_schema_valid() {
    let dir = notes();
    let handshake = json!({"type": "handshake", "protocol_version": "contextgraph/1.0-draft"});
    let query = json!({"type": "query", "id": "q1", "query": {"goal": "retry policy backoff", "max_frames": 5, "max_tokens": 2000}});
    let (replies, _) = session(
        dir.path(),
        &[
            handshake.clone(),
            query.clone(),
            json!({"type": "shutdown"}),
        ],
    );
    let ack = &replies[0];
    assert_eq!(ack["type"], "handshake_ack");
    assert_eq!(ack["provider"]["name"], "mcp-fixture-notes");
    assert_eq!(ack["provider"]["data_flow"]["egress"], false);
    assert_eq!(
        ack["provider"]["data_flow"]["egress_scopes"],
        json!(["local-only"])
    );
    let frames = &replies[1];
    assert_eq!(frames["type"], "frames");
    assert_eq!(frames["id"], "q1");
    let first = &frames["result"]["frames"][0];
    assert!(
        first["id"].as_str().unwrap().ends_with("retry.md"),
        "{frames}"
    );
    let digest = first["content_digest"].clone();
    assert_eq!(first["provenance"][0]["type"], "mcp_resource");
    assert_eq!(first["provenance"][0]["digest"], digest);

    // A second session verifies what the first one served.
    let verify = json!({"type": "verify", "request": {"frames": [
        {"provider_id": "mcp-fixture-notes", "frame_id": first["id"], "content_digest": digest}
    ]}});
    let (replies, status) = session(
        dir.path(),
        &[handshake, verify, json!({"type": "shutdown"})],
    );
    assert_eq!(replies[1]["type"], "verified");
    assert_eq!(replies[1]["response"]["verdicts"][0]["status"], "valid");
    assert!(status.success(), "R2: exits 0 after shutdown");
}

#[test]
fn the_bridge_passes_the_strict_conformance_suite() {
    let dir = notes();
    let target = Target::stdio(env!("CARGO_BIN_EXE_cgp"), bridge_args(dir.path(), &[]));
    let options = SuiteOptions::default()
        .strict(true)
        .with_goal_first("retry policy backoff");
    let report = run_suite(&target, &options);
    assert!(report.passed(), "{}", report.render_text());
    assert!(
        report.names_with(Status::Skipped).is_empty(),
        "{}",
        report.render_text()
    );
    assert!(report.names_with(Status::Fail).is_empty());
    // The F5 re-read from disk really ran: the fixture serves files verbatim.
    let f5 = report.check("file-provenance").map(|c| c.status);
    assert_eq!(f5, Some(Status::Pass), "{}", report.render_text());
}

#[test]
fn c5_an_off_machine_scope_without_egress_is_refused_before_serving() {
    let dir = notes();
    let out = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(bridge_args(
            dir.path(),
            &["--egress-scope", "third-party-index"],
        ))
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing on the CGP channel");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("C5") && err.contains("third-party-index") && err.contains("--egress"),
        "{err}"
    );
}

#[test]
fn declared_egress_is_announced_in_the_handshake() {
    let dir = notes();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(bridge_args(
            dir.path(),
            &[
                "--egress",
                "--egress-scope",
                "third-party-index",
                "--name",
                "notes",
            ],
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}}"#
    )
    .unwrap();
    // A host waits for the acknowledgement before it says anything else (the
    // bridge answers the handshake once the MCP server is initialized, and a
    // shutdown sent before that ends the session without one).
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    writeln!(stdin, r#"{{"type":"shutdown"}}"#).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let ack: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(ack["provider"]["name"], "notes");
    assert_eq!(ack["provider"]["data_flow"]["egress"], true);
    assert_eq!(
        ack["provider"]["data_flow"]["egress_scopes"],
        json!(["third-party-index"])
    );
}

#[test]
fn an_mcp_server_that_cannot_start_is_a_named_failure() {
    let out = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(["bridge", "mcp", "--", "/nonexistent/mcp-server"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/mcp-server"), "{err}");
}

#[test]
fn bridge_mcp_without_a_command_is_a_usage_error_and_help_has_examples() {
    let out = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(["bridge", "mcp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let help = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(["bridge", "mcp", "--help"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(help.status.success());
    let text = String::from_utf8(help.stdout).unwrap();
    assert!(text.contains("Examples:") && text.contains("--egress-scope"));
}
