//! `normal`: malformed input never kills the provider (R1): every bad line
//! or bad request gets `bad_request` (with its id when one is readable),
//! unknown notifications are ignored (§1), and the session carries on.

use crate::common;

use common::{frames_of, query, Provider};
use serde_json::json;

#[test]
fn r1_malformed_lines_get_bad_request_and_the_session_survives() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    for line in [
        "this is not json",
        "[1,2,3]",
        "{\"no_type\":true}",
        "{\"type\":\"query\",\"id\":\"broken\",\"query\":{\"goal\":\"x\"}}",
    ] {
        p.send_line(line);
        let reply = p.recv_valid();
        assert_eq!(reply["type"], "error", "{line}: {reply}");
        assert_eq!(reply["code"], "bad_request", "{line}: {reply}");
        assert!(reply["message"].as_str().unwrap().contains("R1"), "{reply}");
    }
    p.send_bytes(b"\xff\xfe not utf-8\n");
    assert_eq!(p.recv_valid()["code"], "bad_request");
    // The malformed query's id was recovered and echoed.
    p.send_line("{\"type\":\"query\",\"id\":\"broken\",\"query\":{\"goal\":\"x\"}}");
    assert_eq!(p.recv_valid()["id"], "broken");
    let ok = p.query("after", &query("retry", 3, 1000));
    assert!(!frames_of(&ok, "after").frames.is_empty());
}

#[test]
fn r1_an_oversized_line_is_answered_and_the_next_line_is_served() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let mut huge = vec![b'x'; 16 * 1024 * 1024 + 10];
    huge.push(b'\n');
    p.send_bytes(&huge);
    let reply = p.recv_valid();
    assert_eq!(reply["code"], "bad_request", "{reply}");
    let ok = p.query("after", &query("retry", 3, 1000));
    frames_of(&ok, "after");
}

#[test]
fn r1_unknown_requests_get_bad_request_and_unknown_notifications_are_ignored() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    p.send(&json!({"type": "ping"}));
    p.send(&json!({"type": "subscribe", "id": "s1", "topic": "x"}));
    let reply = p.recv_valid();
    assert_eq!(
        reply["type"], "error",
        "the notification got no reply: {reply}"
    );
    assert_eq!(reply["code"], "bad_request");
    assert_eq!(reply["id"], "s1");
    // Provider-to-host envelopes are not requests either.
    p.send(&json!({"type": "frames", "id": "f1", "result": {"frames": [], "truncated": false}}));
    let reply = p.recv_valid();
    assert_eq!(
        (reply["code"].as_str(), reply["id"].as_str()),
        (Some("bad_request"), Some("f1"))
    );
    // A host's error needs no answer; the next reply is the query's.
    p.send(&json!({"type": "error", "message": "host side trouble"}));
    frames_of(&p.query("q", &query("retry", 3, 1000)), "q");
}

#[test]
fn r1_an_invalid_query_is_a_bad_request_naming_the_rule() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let mut q = query("retry", 3, 1000);
    q["as_of"] = json!("2025-01-01 00:00:00");
    let reply = p.query("t", &q);
    assert_eq!(
        (reply["code"].as_str(), reply["id"].as_str()),
        (Some("bad_request"), Some("t"))
    );
    assert!(reply["message"].as_str().unwrap().contains("F4"), "{reply}");
}
