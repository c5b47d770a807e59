//! R1 over real pipes: malformed lines and requests the provider cannot
//! serve get `error`/`bad_request`, and the provider keeps serving.

use crate::common::{frames_of, query, start, Session, DOCS_BIN};
use serde_json::json;

fn session() -> (tempfile::TempDir, Session) {
    start(DOCS_BIN, &[])
}

fn assert_still_serving(session: &mut Session) {
    let reply = session.query("after", &query("retry", 2, 4000));
    assert!(!frames_of(&reply, "after").frames.is_empty(), "{reply}");
}

#[test]
fn r1_a_line_that_is_not_json_gets_bad_request_and_the_provider_stays_alive() {
    let (_dir, mut session) = session();
    session.send_line("this is {not json");
    let reply = session.recv();
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "bad_request");
    assert!(reply["message"]
        .as_str()
        .unwrap()
        .contains("contextgraph-provider-docs"));
    assert!(session.is_running());
    assert_still_serving(&mut session);
}

#[test]
fn r1_a_malformed_query_gets_bad_request_echoing_its_id() {
    let (_dir, mut session) = session();
    session.send(&json!({"type": "query", "id": "broken", "query": {"goal": 7}}));
    let reply = session.recv();
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "bad_request");
    assert_eq!(reply["id"], "broken");
    assert_still_serving(&mut session);
}

#[test]
fn r1_invalid_utf8_and_non_object_lines_get_bad_request() {
    let (_dir, mut session) = session();
    session.send_line("[1, 2, 3]");
    assert_eq!(session.recv()["code"], "bad_request");
    session.send_bytes(b"{\"type\":\"query\",\"id\":\"x\",\"query\":{\"goal\":\"\xff\xfe\"}}\n");
    assert_eq!(session.recv()["code"], "bad_request");
    assert_still_serving(&mut session);
}

#[test]
fn f4_a_query_with_a_malformed_as_of_is_a_bad_request_naming_the_rule() {
    let (_dir, mut session) = session();
    let mut q = query("retry", 2, 4000);
    q["as_of"] = json!("2026-07-20 18:00:00");
    let reply = session.query("pinned", &q);
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "bad_request");
    assert_eq!(reply["id"], "pinned");
    assert!(reply["message"].as_str().unwrap().contains("F4"), "{reply}");
    assert_still_serving(&mut session);
}

#[test]
fn unknown_request_types_get_bad_request_and_unknown_notifications_are_ignored() {
    let (_dir, mut session) = session();
    session.send(&json!({"type": "subscribe", "id": "s1"}));
    let reply = session.recv();
    assert_eq!(reply["code"], "bad_request", "{reply}");
    assert_eq!(reply["id"], "s1");
    // No id: a notification, ignored — the next reply is the query's.
    session.send(&json!({"type": "progress", "percent": 50}));
    assert_still_serving(&mut session);
}

#[test]
fn e1_a_query_vector_without_a_declared_space_is_a_bad_request() {
    let (_dir, mut session) = session();
    let mut q = query("retry", 2, 4000);
    q["embedding"] = json!([0.1, 0.2, 0.3]);
    let reply = session.query("vec", &q);
    assert_eq!(reply["code"], "bad_request", "{reply}");
    assert!(reply["message"].as_str().unwrap().contains("E1"), "{reply}");
    assert_still_serving(&mut session);
}
