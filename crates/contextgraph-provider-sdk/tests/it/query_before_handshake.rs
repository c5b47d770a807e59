//! No query payload moves before the handshake completes: a `query` or
//! `verify` first is refused with `bad_request`, and the session goes on.

use crate::common::{expect_error, frame_ids, handshake_line, query_line, Host, TestProvider};
use serde_json::json;

#[test]
fn query_before_handshake_is_bad_request_echoing_the_id_when_correlated() {
    let mut host = Host::start(TestProvider::new("early").correlated());
    host.send(&query_line(Some("q-early"), "anything", 5, 100));
    let reply = host.recv();
    let message = expect_error(&reply, "bad_request");
    assert!(message.contains("handshake first"), "{message}");
    assert_eq!(reply["id"], "q-early");
}

#[test]
fn query_before_handshake_in_lock_step_carries_no_id() {
    let mut host = Host::start(TestProvider::new("early-lockstep"));
    host.send(&query_line(Some("q-early"), "anything", 5, 100));
    let reply = host.recv();
    expect_error(&reply, "bad_request");
    assert!(reply.get("id").is_none(), "{reply}");
}

#[test]
fn verify_before_handshake_is_bad_request() {
    let mut host = Host::start(TestProvider::new("early-verify").verifying());
    host.send(&json!({"type": "verify", "request": {"frames": []}}).to_string());
    let message = expect_error(&host.recv(), "bad_request");
    assert!(message.contains("handshake first"), "{message}");
}

#[test]
fn the_provider_is_never_called_before_the_handshake() {
    let provider = TestProvider::new("never-early").on_query(|q| {
        panic!(
            "query {:?} reached the provider before the handshake",
            q.goal
        )
    });
    let mut host = Host::start(provider);
    host.send(&query_line(None, "x", 5, 100));
    expect_error(&host.recv(), "bad_request");
    host.send(&handshake_line("contextgraph/1.0-draft"));
    assert_eq!(host.recv()["type"], "handshake_ack");
}

#[test]
fn after_the_handshake_the_same_query_is_answered() {
    let mut host = Host::start(TestProvider::new("then-ok"));
    host.send(&query_line(None, "goal", 5, 100));
    expect_error(&host.recv(), "bad_request");
    host.send(&handshake_line("contextgraph/1.0-draft"));
    host.recv();
    host.send(&query_line(None, "goal", 5, 100));
    assert_eq!(frame_ids(&host.recv()), ["frame-for:goal"]);
}
