//! H1–H3, C5 over real pipes: the provider binary answers a handshake with
//! an ack in the host's family, a named identity, truthful data flow and the
//! capabilities it really has; a foreign family is a named error, not a hang.

use crate::common::{docs_fixture, schema_errors, Session};
use contextgraph_types::{validate, Capabilities, ProviderInfo, PROTOCOL_VERSION};
use serde_json::json;

fn spawn(dir: &std::path::Path) -> Session {
    Session::spawn(env!("CARGO_BIN_EXE_contextgraph-provider-docs"), [dir])
}

#[test]
fn h1_h2_c5_ack_is_in_the_host_family_with_identity_and_local_only_data_flow() {
    let dir = docs_fixture();
    let mut session = spawn(dir.path());
    let ack = session.handshake();
    let provider: ProviderInfo = serde_json::from_value(ack["provider"].clone()).unwrap();
    let capabilities: Capabilities = serde_json::from_value(ack["capabilities"].clone()).unwrap();
    let protocol_version = ack["protocol_version"].as_str().unwrap();
    let violations =
        validate::handshake_ack(protocol_version, &provider, &capabilities, PROTOCOL_VERSION);
    assert!(violations.is_empty(), "{violations:#?}");
    assert_eq!(provider.name, "contextgraph-provider-docs");
    assert_eq!(
        ack["provider"]["data_flow"],
        json!({"reads": true, "writes": false, "egress": false, "egress_scopes": ["local-only"]})
    );
    assert_eq!(ack["capabilities"]["query"]["kinds"], json!(["doc"]));
    assert_eq!(ack["capabilities"]["correlation"], true);
    assert_eq!(ack["capabilities"]["verify"], true);
}

#[test]
fn h3_a_foreign_major_family_gets_incompatible_version_and_the_provider_stays_up() {
    let dir = docs_fixture();
    let mut session = spawn(dir.path());
    session.send(&json!({"type": "handshake", "protocol_version": "contextgraph/2.0"}));
    let reply = session.recv();
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "incompatible_version");
    assert!(reply["message"].as_str().unwrap().contains("H3"), "{reply}");
    // A compatible retry still works.
    session.handshake();
}

#[test]
fn the_schema_check_every_reply_goes_through_rejects_a_broken_envelope() {
    // Guards the harness itself: if the schema check passed everything, every
    // "reply validates against the schema" assertion would be empty.
    let broken = json!({"type": "handshake_ack", "protocol_version": "contextgraph/1.0-draft",
        "provider": {"name": "", "version": "1", "data_flow": {"reads": true, "writes": false, "egress": false}},
        "capabilities": {"query": {"kinds": ["doc"]}}});
    assert!(!schema_errors(&broken).is_empty());
    let bad_score = json!({"type": "frames", "result": {"truncated": false, "frames": [
        {"id": "a", "kind": "doc", "title": "t", "score": 1.5, "token_cost": 0}]}});
    assert!(!schema_errors(&bad_score).is_empty());
}
