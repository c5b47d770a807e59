//! The runner rejects a query's own faults before the provider sees it:
//! empty goal, a non-F4 `as_of`, and E1 vector-length contradictions.

use crate::common::{expect_error, frame_ids, Host, TestProvider};
use contextgraph_provider_sdk::ServeOptions;
use serde_json::json;

fn untouchable(name: &str) -> TestProvider {
    TestProvider::new(name).on_query(|q| panic!("invalid query {q:?} reached the provider"))
}

fn query(body: serde_json::Value) -> String {
    json!({"type": "query", "query": body}).to_string()
}

#[test]
fn f4_an_as_of_outside_the_wire_form_is_bad_request() {
    let mut host = Host::handshaken(untouchable("f4"), ServeOptions::default());
    host.send(&query(
        json!({"goal": "g", "max_frames": 1, "max_tokens": 10, "as_of": "2026-07-20 18:00:00"}),
    ));
    let message = expect_error(&host.recv(), "bad_request");
    assert!(message.contains("F4"), "{message}");
}

#[test]
fn an_empty_goal_is_bad_request() {
    let mut host = Host::handshaken(untouchable("shape"), ServeOptions::default());
    host.send(&query(
        json!({"goal": "  ", "max_frames": 1, "max_tokens": 10}),
    ));
    let message = expect_error(&host.recv(), "bad_request");
    assert!(message.contains("goal"), "{message}");
}

#[test]
fn e1_a_vector_of_the_wrong_dimension_is_bad_request() {
    let mut host = Host::handshaken(
        untouchable("e1").fingerprint("m/3/l2"),
        ServeOptions::default(),
    );
    host.send(&query(
        json!({"goal": "g", "embedding": [0.1, 0.2], "max_frames": 1, "max_tokens": 10}),
    ));
    let message = expect_error(&host.recv(), "bad_request");
    assert!(message.contains("E1"), "{message}");
    assert!(message.contains("2 dimensions"), "{message}");
}

#[test]
fn e1_a_vector_to_a_provider_without_embedding_space_is_bad_request() {
    let mut host = Host::handshaken(untouchable("e1-none"), ServeOptions::default());
    host.send(&query(
        json!({"goal": "g", "embedding": [0.1], "max_frames": 1, "max_tokens": 10}),
    ));
    let message = expect_error(&host.recv(), "bad_request");
    assert!(message.contains("E1"), "{message}");
}

#[test]
fn e1_a_vector_of_the_declared_dimension_is_served() {
    let mut host = Host::handshaken(
        TestProvider::new("e1-ok").fingerprint("m/3/l2"),
        ServeOptions::default(),
    );
    host.send(&query(
        json!({"goal": "g", "embedding": [0.1, 0.2, 0.3], "max_frames": 1, "max_tokens": 10}),
    ));
    assert_eq!(frame_ids(&host.recv()), ["frame-for:g"]);
}

/// Bounded work per request: each limit of `contextgraph_types::limits` is
/// answered with `bad_request` naming it, before the provider sees the query.
#[test]
fn requests_over_a_limit_are_bad_request_with_a_sentence() {
    use contextgraph_types::limits::{
        MAX_ANCHORS, MAX_FRAMES, MAX_GOAL_BYTES, MAX_GOAL_TERMS, MAX_KINDS,
    };
    let words: Vec<String> = (0..=MAX_GOAL_TERMS).map(|i| format!("w{i}")).collect();
    let cases = [
        (
            json!({"goal": "x".repeat(MAX_GOAL_BYTES + 1), "max_frames": 1, "max_tokens": 10}),
            "goal is",
        ),
        (
            json!({"goal": words.join(" "), "max_frames": 1, "max_tokens": 10}),
            "distinct words",
        ),
        (
            json!({"goal": "g", "anchors": vec!["a"; MAX_ANCHORS + 1], "max_frames": 1, "max_tokens": 10}),
            "anchors has",
        ),
        (
            json!({"goal": "g", "kinds": vec!["doc"; MAX_KINDS + 1], "max_frames": 1, "max_tokens": 10}),
            "kinds has",
        ),
        (
            json!({"goal": "g", "max_frames": MAX_FRAMES + 1, "max_tokens": 10}),
            "max_frames is",
        ),
    ];
    for (body, says) in cases {
        let mut host = Host::handshaken(untouchable("limits"), ServeOptions::default());
        host.send(&query(body));
        let message = expect_error(&host.recv(), "bad_request");
        assert!(message.contains("over the limit"), "{message}");
        assert!(message.contains(says), "{says}: {message}");
    }
}
