//! `normal`: correlation (H4) — several queries in flight, each reply
//! carrying its own request's id verbatim, whatever order they come back in.

use crate::common;

use std::collections::BTreeMap;

use common::{result_of, roomy_query, Provider};
use serde_json::json;

#[test]
fn h4_pipelined_queries_are_answered_by_id() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let kinds = ["doc", "snippet", "graph"];
    let mut sent = BTreeMap::new();
    for i in 0..12 {
        let id = format!("q-{i}");
        let mut q = roomy_query();
        q["kinds"] = json!([kinds[i % 3]]);
        p.send(&json!({"type": "query", "id": id, "query": q}));
        sent.insert(id, kinds[i % 3]);
    }
    let mut seen = BTreeMap::new();
    for _ in 0..sent.len() {
        let reply = p.recv_valid();
        let id = reply["id"]
            .as_str()
            .expect("every reply carries an id")
            .to_owned();
        let result = result_of(&reply);
        seen.insert(id, result);
    }
    assert_eq!(
        seen.keys().collect::<Vec<_>>(),
        sent.keys().collect::<Vec<_>>()
    );
    for (id, kind) in &sent {
        let result = &seen[id];
        assert!(!result.frames.is_empty());
        assert!(
            result.frames.iter().all(|f| f.kind.as_str() == *kind),
            "{id} got another query's answer"
        );
    }
}

#[test]
fn h4_ids_are_echoed_verbatim() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    for id in ["weird id ✓ \"quoted\"", "0", "q\\n1"] {
        let reply = p.query(id, &roomy_query());
        assert_eq!(reply["id"], id, "{reply}");
    }
}
