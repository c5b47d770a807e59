//! `normal`: the handshake (H1, H2, H3, C5) announces every capability, and
//! nothing moves before it.

use crate::common;

use common::{ack_violations, query, Provider, PROVIDER};
use serde_json::json;

#[test]
fn h1_h2_c5_normal_ack_declares_every_capability() {
    let mut p = Provider::spawn(&[]);
    let ack = p.handshake();
    contextgraph_testkit::assert_schema_valid(&ack);
    assert!(
        ack_violations(&ack).is_empty(),
        "{:#?}",
        ack_violations(&ack)
    );
    assert_eq!(ack["protocol_version"], "contextgraph/1.0-draft");
    assert_eq!(ack["provider"]["name"], PROVIDER);
    assert!(!ack["provider"]["version"]
        .as_str()
        .unwrap_or_default()
        .is_empty());
    assert_eq!(
        ack["provider"]["data_flow"],
        json!({"reads": true, "writes": false, "egress": false, "egress_scopes": ["local-only"]})
    );
    let caps = &ack["capabilities"];
    assert_eq!(caps["query"]["kinds"], json!(["doc", "snippet", "graph"]));
    assert_eq!(caps["correlation"], true);
    assert_eq!(caps["graph"], true);
    assert_eq!(caps["verify"], true);
    assert_eq!(caps["embeddings_fingerprint"], "test-embed/4/l2");
    assert!(caps.get("representations").is_none(), "full only: {caps}");
    assert_eq!(p.shutdown().code(), Some(0));
}

#[test]
fn h2_name_and_version_are_overridable() {
    let mut p = Provider::spawn(&["--name", "acme-docs", "--version", "9.9.9"]);
    let ack = p.handshake();
    assert_eq!(ack["provider"]["name"], "acme-docs");
    assert_eq!(ack["provider"]["version"], "9.9.9");
}

#[test]
fn h3_an_incompatible_host_gets_a_named_error_and_may_handshake_again() {
    let mut p = Provider::spawn(&[]);
    p.send(&json!({"type": "handshake", "protocol_version": "contextgraph/2.0"}));
    let err = p.recv_valid();
    assert_eq!(err["type"], "error", "{err}");
    assert_eq!(err["code"], "incompatible_version", "{err}");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(PROVIDER) && message.contains("H3"),
        "{message}"
    );
    // The refused handshake did not open the session...
    let reply = p.query("q0", &query("retry", 5, 500));
    assert_eq!(reply["code"], "bad_request", "{reply}");
    // ...and a compatible one still can.
    p.handshake();
}

#[test]
fn no_query_or_verify_is_served_before_the_handshake() {
    let mut p = Provider::spawn(&[]);
    let reply = p.query("q1", &query("retry", 5, 500));
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "bad_request", "{reply}");
    assert_eq!(reply["id"], "q1", "{reply}");
    let reply = p.verify(&[]);
    assert_eq!(reply["code"], "bad_request", "{reply}");
}
