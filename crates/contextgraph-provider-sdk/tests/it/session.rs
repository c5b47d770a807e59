//! The transport-free `Session` (what an HTTP server reuses, one envelope per
//! POST body) answers exactly as the stdio runner does.

use std::sync::Arc;
use std::thread;

use crate::common::{handshake_line, query_line, schema, TestProvider};
use contextgraph_codec::{encode_line, Envelope};
use contextgraph_provider_sdk::{Dispatch, Session};
use serde_json::Value;

fn reply_json(env: &Envelope) -> Value {
    let v: Value = serde_json::from_slice(&encode_line(env).unwrap()).unwrap();
    schema::assert_valid_envelope(&v);
    v
}

fn assert_sync<T: Sync + Send>() {}

#[test]
fn session_handles_one_envelope_per_call() {
    let session = Session::new(TestProvider::new("http").correlated());
    assert!(!session.is_handshaken());
    let early = session
        .handle_line(query_line(Some("e"), "g", 5, 100).as_bytes())
        .unwrap();
    assert_eq!(reply_json(&early)["code"], "bad_request");
    let ack = session
        .handle_line(handshake_line("contextgraph/1.0-draft").as_bytes())
        .unwrap();
    assert_eq!(reply_json(&ack)["type"], "handshake_ack");
    assert!(session.is_handshaken());
    let frames = session
        .handle_line(query_line(Some("h1"), "g", 5, 100).as_bytes())
        .unwrap();
    let frames = reply_json(&frames);
    assert_eq!(frames["type"], "frames");
    assert_eq!(frames["id"], "h1");
    assert!(session.handle_line(br#"{"type":"shutdown"}"#).is_none());
    assert!(
        session.handle_line(br#"{"type":"ping"}"#).is_none(),
        "unknown notification"
    );
    let bad = session.handle_line(b"nope").unwrap();
    assert_eq!(reply_json(&bad)["code"], "bad_request");
}

#[test]
fn dispatch_separates_immediate_replies_from_provider_work() {
    let session = Session::new(TestProvider::new("split"));
    assert!(matches!(
        session.dispatch_line(handshake_line("contextgraph/1.0-draft").as_bytes()),
        Dispatch::Reply(_)
    ));
    let job = match session.dispatch_line(query_line(None, "g", 5, 100).as_bytes()) {
        Dispatch::Run(job) => job,
        other => panic!("expected provider work, got {other:?}"),
    };
    assert_eq!(job.type_name(), "query");
    assert_eq!(reply_json(&session.run(job))["type"], "frames");
    assert!(matches!(
        session.dispatch_line(br#"{"type":"shutdown"}"#),
        Dispatch::Shutdown
    ));
    assert!(matches!(
        session.dispatch_line(br#"{"type":"error","message":"x"}"#),
        Dispatch::Ignore
    ));
    let oversized = reply_json(&session.oversized_line(10_000, 4096));
    assert_eq!(oversized["code"], "bad_request");
}

#[test]
fn one_session_serves_concurrent_request_threads() {
    assert_sync::<Session<TestProvider>>();
    let session = Arc::new(Session::new(TestProvider::new("shared").correlated()));
    session.handle_line(handshake_line("contextgraph/1.0-draft").as_bytes());
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let s = Arc::clone(&session);
            thread::spawn(move || {
                let id = format!("t{i}");
                let reply = s
                    .handle_line(query_line(Some(&id), &id, 5, 100).as_bytes())
                    .unwrap();
                assert_eq!(reply.correlation_id(), Some(id.as_str()));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn self_check_names_handshake_problems_a_host_would_refuse() {
    let mut provider = TestProvider::new("");
    provider.caps.representations = vec![contextgraph_types::Representation::Compact];
    let problems = Session::new(provider).self_check();
    let anchors: Vec<String> = problems.iter().map(|v| v.anchor.to_string()).collect();
    assert!(anchors.contains(&"H2".to_owned()), "{anchors:?}");
    assert!(anchors.contains(&"resolve".to_owned()), "{anchors:?}");
    assert!(Session::new(TestProvider::new("fine"))
        .self_check()
        .is_empty());
}
