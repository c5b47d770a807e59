//! `cgp serve workspace DIR` speaks the protocol over real pipes and exits 0 on shutdown.

use std::io::Write;
use std::process::{Command, Stdio};

use contextgraph_codec::{decode_envelope, Envelope};

#[test]
fn serve_workspace_answers_a_session_and_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lib.rs"),
        "/// Adds two numbers.\npub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(["serve", "workspace", "--quiet", "--no-cache"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            concat!(
                "{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}\n",
                "{\"type\":\"query\",\"id\":\"q1\",\"query\":{\"goal\":\"add two numbers\",\"max_frames\":3,\"max_tokens\":400}}\n",
                "{\"type\":\"shutdown\"}\n"
            )
            .as_bytes(),
        )
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replies: Vec<Envelope> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| decode_envelope(l).unwrap())
        .collect();
    assert!(
        matches!(&replies[0], Envelope::HandshakeAck { provider, .. } if provider.name == "contextgraph-provider-workspace")
    );
    let Envelope::Frames { id, result } = &replies[1] else {
        panic!("{replies:?}")
    };
    assert_eq!(id.as_deref(), Some("q1"));
    assert!(
        result.frames.iter().any(|f| f
            .content
            .as_deref()
            .is_some_and(|c| c.contains("pub fn add"))),
        "{result:?}"
    );
    for line in out.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        contextgraph_testkit::assert_line_schema_valid(line);
    }
}

/// The files of `cgp serve workspace`'s answer to `goal` over `dir`, in
/// rank order, with `env` set; and its stderr.
fn served_files(dir: &std::path::Path, goal: &str, env: &[(&str, &str)]) -> (Vec<String>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cgp"));
    cmd.args(["serve", "workspace", "--no-cache", "--refresh-secs", "0"])
        .arg(dir)
        .env_remove("CGP_RANK_SIGNALS_OFF")
        .env_remove("CGP_RANK_SIGNALS_ON")
        .env_remove("CGP_SEMANTIC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let query = format!(
        "{{\"type\":\"query\",\"id\":\"q1\",\"query\":{{\"goal\":{goal:?},\"max_frames\":8,\"max_tokens\":2000}}}}\n"
    );
    stdin
        .write_all(
            format!(
                "{{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}}\n{query}{{\"type\":\"shutdown\"}}\n"
            )
            .as_bytes(),
        )
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut files: Vec<String> = Vec::new();
    for line in out.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        if let Ok(Envelope::Frames { result, .. }) = decode_envelope(line) {
            for f in result.frames {
                let file = f.id.split('#').next().unwrap_or_default().to_owned();
                if !files.contains(&file) {
                    files.push(file);
                }
            }
        }
    }
    (files, stderr)
}

#[test]
fn the_ranking_switches_change_what_serve_workspace_answers() {
    // A one-word symbol lookup whose word is everywhere: the definition step
    // is what puts the defining file first (as in the provider's own
    // ranking_signals tests).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("web.go"),
        "package web\n\ntype Context struct {\n\tpath string\n}\n",
    )
    .unwrap();
    let mut handlers = String::from("package web\n\n");
    for i in 0..6 {
        handlers.push_str(&format!(
            "// contextFor{i} reads the context: context in, context out.\nfunc contextFor{i}(c *Context) *Context {{\n\treturn c // context\n}}\n\n"
        ));
    }
    std::fs::write(dir.path().join("context_handlers.go"), handlers).unwrap();

    let (on, stderr) = served_files(dir.path(), "Context", &[]);
    assert_eq!(
        on.first().map(String::as_str),
        Some("web.go"),
        "{on:?} {stderr}"
    );
    assert!(!stderr.contains("ranking switches"), "{stderr}");

    let (off, stderr) = served_files(
        dir.path(),
        "Context",
        &[("CGP_RANK_SIGNALS_OFF", "definitions")],
    );
    assert_ne!(off.first().map(String::as_str), Some("web.go"), "{off:?}");
    assert!(
        stderr.contains("ranking switches in force: -definitions"),
        "{stderr}"
    );

    // Switched off, then back on: the default answer again.
    let (back, _) = served_files(
        dir.path(),
        "Context",
        &[("CGP_RANK_SIGNALS_OFF", "all"), ("CGP_RANK_SIGNALS_ON", "definitions,roles,coherence,saturation,file_focus,file_name,semantic,floor,question_semantic,question_agreement")],
    );
    assert_eq!(back, on);

    let (_, stderr) = served_files(dir.path(), "Context", &[("CGP_SEMANTIC", "0")]);
    assert!(stderr.contains("CGP_SEMANTIC=0"), "{stderr}");
}

#[test]
fn a_misspelt_ranking_switch_is_an_error_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "pub fn add() {}\n").unwrap();
    for (var, value) in [
        ("CGP_RANK_SIGNALS_OFF", "defintions"),
        ("CGP_SEMANTIC", "maybe"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cgp"))
            .args(["serve", "workspace", "--quiet", "--no-cache"])
            .arg(dir.path())
            .env(var, value)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{var}={value} was accepted");
        assert!(stderr.contains(var) && stderr.contains(value), "{stderr}");
    }
}
