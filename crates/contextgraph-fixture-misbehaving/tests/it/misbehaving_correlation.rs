//! Correlation misbehaviours (H4): `dropped-id`, `wrong-id`, and the
//! conformant `lockstep`.

use crate::common;

use common::{query, result_of, roomy_query, Provider};
use serde_json::json;

#[test]
fn h4_dropped_id_omits_ids_while_declaring_correlation() {
    let mut p = Provider::mode("dropped-id", &[]);
    let ack = p.handshake();
    assert_eq!(ack["capabilities"]["correlation"], true);
    let reply = p.query("q1", &roomy_query());
    assert_eq!(reply["type"], "frames");
    assert!(reply.get("id").is_none(), "{reply}");
    p.send_line("{\"type\":\"query\",\"id\":\"q2\",\"query\":{}}");
    let err = p.recv();
    assert_eq!(err["type"], "error");
    assert!(err.get("id").is_none(), "{err}");
}

#[test]
fn h4_wrong_id_echoes_a_different_id() {
    let mut p = Provider::mode("wrong-id", &[]);
    assert_eq!(p.handshake()["capabilities"]["correlation"], true);
    let reply = p.query("q1", &roomy_query());
    assert_eq!(reply["type"], "frames");
    let id = reply["id"].as_str().expect("an id is echoed");
    assert_ne!(id, "q1");
}

#[test]
fn h4_lockstep_declares_no_correlation_and_answers_in_order_without_ids() {
    let mut p = Provider::mode("lockstep", &[]);
    let ack = p.handshake();
    assert_eq!(ack["capabilities"]["correlation"], false);
    assert!(common::ack_violations(&ack).is_empty());
    for n in 1..=4u32 {
        p.send(&json!({"type": "query", "query": query("retry policy", n, 100_000)}));
    }
    for n in 1..=4usize {
        let reply = p.recv_valid();
        assert!(reply.get("id").is_none(), "{reply}");
        assert_eq!(
            result_of(&reply).frames.len(),
            n,
            "replies come back in order"
        );
    }
    // Even an id a host should not have sent is not echoed.
    let reply = p.query("q9", &roomy_query());
    assert!(reply.get("id").is_none(), "{reply}");
}
