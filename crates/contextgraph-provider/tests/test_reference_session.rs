//! Interop: replaying the host side of the shared reference session
//! (`shared/wire/full-stdio-session.ndjson`) against a provider built with
//! this SDK yields the same sequence of envelope types, ids included.

mod common;

use common::{Host, TestProvider};
use contextgraph_provider::{pack, FrameBuilder, ServeOptions};
use contextgraph_types::{FrameKind, FrameVerdict, Verdict, VerifyResponse};
use serde_json::Value;

const SESSION: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/wire/full-stdio-session.ndjson"
);

fn repo_graph() -> TestProvider {
    let mut p = TestProvider::new("repo-graph")
        .correlated()
        .verifying()
        .on_query(|q| {
            let doc = FrameBuilder::new(
                "repo-graph:retry-doc",
                FrameKind::Doc,
                "Retry policy",
                "Retry behavior is set in Config::retry.",
            )
            .uri("file:///repo/docs/retry.md")
            .score(0.92)
            .build();
            let sym = FrameBuilder::new(
                "repo-graph:retry-sym",
                FrameKind::Symbol,
                "Config::retry",
                "pub struct RetryPolicy { pub max_attempts: u32 }",
            )
            .score(0.81)
            .build();
            Ok(pack(vec![doc, sym], q))
        })
        .on_verify(|r| VerifyResponse {
            verdicts: r
                .frames
                .iter()
                .map(|f| FrameVerdict {
                    frame: f.clone(),
                    verdict: Verdict::Valid,
                })
                .collect(),
        });
    p.caps.query.kinds = vec![FrameKind::Doc, FrameKind::Symbol];
    p.caps.graph = true;
    p
}

#[test]
fn replaying_the_reference_host_lines_gets_the_reference_reply_types() {
    let text = std::fs::read_to_string(SESSION).expect("reference session is readable");
    let messages: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let host_types = ["handshake", "query", "verify", "shutdown"];
    let mut host = Host::start_with(repo_graph(), ServeOptions::default());
    // Replay in transcript order: a provider reply is awaited before the next
    // host line goes out, exactly as the reference host did. Sending every
    // host line at once would let a correlated provider answer `verify`
    // before `query`, which is legal (H4 correlates by id) but not what the transcript shows.
    let mut expected = Vec::new();
    let mut got: Vec<(String, Option<Value>)> = Vec::new();
    for m in &messages {
        let t = m["type"].as_str().unwrap();
        if host_types.contains(&t) {
            host.send(&m.to_string());
        } else {
            expected.push((t.to_owned(), m.get("id").cloned()));
            let r = host.recv();
            got.push((r["type"].as_str().unwrap().to_owned(), r.get("id").cloned()));
        }
    }
    assert_eq!(got, expected);
    host.finish()
        .expect("the session ends with a clean shutdown");
    assert!(host.output_ended());
}
