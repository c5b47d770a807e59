//! The binary serves the workspace over stdio: handshake (H1), a query whose
//! frames pass the audit, verify, and a clean exit on shutdown (R2).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::common::Fixture;

#[test]
fn binary_answers_handshake_query_verify_and_exits_on_shutdown() {
    let f = Fixture::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_contextgraph-provider-workspace"))
        .arg(f.dir.path())
        .arg("--cache-dir")
        .arg(f.cache.path())
        .arg("--quiet")
        .arg("--refresh-secs")
        .arg("0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn provider");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next = || -> serde_json::Value {
        let line = lines.next().expect("a reply line").expect("read");
        serde_json::from_str(&line).expect("reply is JSON")
    };
    writeln!(
        stdin,
        r#"{{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}}"#
    )
    .expect("write");
    let ack = next();
    assert_eq!(ack["type"], "handshake_ack");
    assert_eq!(ack["provider"]["name"], "contextgraph-provider-workspace");
    assert_eq!(ack["capabilities"]["verify"], true);

    writeln!(stdin, r#"{{"type":"query","id":"q1","query":{{"goal":"retry_loop","max_frames":3,"max_tokens":4000}}}}"#).expect("write");
    let frames = next();
    assert_eq!(frames["type"], "frames", "{frames}");
    assert_eq!(frames["id"], "q1");
    let first = &frames["result"]["frames"][0];
    assert_eq!(first["id"], "src/net.rs#net::retry_loop");

    let verify = serde_json::json!({"type":"verify","request":{"frames":[{
        "provider_id": "contextgraph-provider-workspace",
        "frame_id": first["id"],
        "content_digest": first["content_digest"],
    }]}});
    writeln!(stdin, "{verify}").expect("write");
    let verified = next();
    assert_eq!(verified["type"], "verified");
    assert_eq!(verified["response"]["verdicts"][0]["status"], "valid");

    writeln!(stdin, "this is not json").expect("write");
    assert_eq!(
        next()["type"],
        "error",
        "R1: a malformed line gets an error and the provider stays up"
    );

    writeln!(stdin, r#"{{"type":"shutdown"}}"#).expect("write");
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success());
}
