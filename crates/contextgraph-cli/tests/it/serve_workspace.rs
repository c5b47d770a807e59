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
