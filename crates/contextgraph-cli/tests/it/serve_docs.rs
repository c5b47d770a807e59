//! `cgp serve docs <DIR>` end to end over real pipes: the same provider as
//! `contextgraph-provider-docs <DIR>`, driven by the same harness (every
//! reply schema-checked, every frame audited and its provenance re-read).

use contextgraph_testkit::docs_fixture::{assert_honest_answer, start};
use contextgraph_testkit::pipe::{frames_of, identity, query, EXIT_DEADLINE};
use serde_json::json;

const CGP: &str = env!("CARGO_BIN_EXE_cgp");
const SERVE_DOCS: &[&str] = &["serve", "docs"];

#[test]
fn h1_h4_v1_r2_a_whole_session_handshake_queries_in_flight_verify_shutdown() {
    let (dir, mut session) = start(CGP, SERVE_DOCS);

    let asks = [
        ("a", "retry policy"),
        ("b", "timeouts"),
        ("c", "logging verbosity"),
    ];
    for (id, goal) in asks {
        session.send(&json!({"type": "query", "id": id, "query": query(goal, 3, 4000)}));
    }
    let mut policy_digest = None;
    let mut seen = Vec::new();
    for _ in asks {
        let reply = session.recv();
        let id = reply["id"].as_str().expect("H4 id").to_owned();
        let goal = asks
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, g)| *g)
            .expect("an id we sent");
        let result = frames_of(&reply, &id);
        assert_honest_answer(&result, &query(goal, 3, 4000));
        if id == "a" {
            let top = &result.frames[0];
            assert_eq!(top.id, "docs/retry.md#retry-policy");
            policy_digest = top.content_digest.clone();
        }
        seen.push(id);
    }
    seen.sort();
    assert_eq!(seen, ["a", "b", "c"], "each query answered exactly once");

    let held = [identity(
        "contextgraph-provider-docs",
        "docs/retry.md#retry-policy",
        policy_digest.as_deref(),
    )];
    assert_eq!(session.verify(&held)[0]["status"], "valid");
    let path = dir.path().join("docs/retry.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("initial delay", "first delay")).unwrap();
    let stale = session.verify(&held);
    assert_eq!(stale[0]["status"], "stale");
    assert!(stale[0]["replacement_digest"]
        .as_str()
        .is_some_and(|d| d.starts_with("sha256:")));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(session.verify(&held)[0]["status"], "gone");

    session.send(&json!({"type": "shutdown"}));
    let status = session
        .wait_exit(EXIT_DEADLINE)
        .expect("R2: exits after shutdown");
    assert!(status.success(), "{status}");
}

#[test]
fn r1_a_malformed_line_gets_bad_request_and_serving_goes_on() {
    let (_dir, mut session) = start(CGP, SERVE_DOCS);
    session.send_line("{\"type\": \"query\", \"id\": \"x\"");
    let reply = session.recv();
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "bad_request");
    let reply = session.query("after", &query("retry policy", 2, 4000));
    assert!(!frames_of(&reply, "after").frames.is_empty());
}
