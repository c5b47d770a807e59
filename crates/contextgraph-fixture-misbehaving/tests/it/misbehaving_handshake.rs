//! Handshake misbehaviours: `wrong-version` (H1/H3), `scope-lie` (C5),
//! `representation-lie` (resolve rule), `stdout-log` (§1), `echo-version`
//! (H3), and the
//! conformant-but-gated `egress` (C1) and `egress-scope` (C6).

use crate::common;

use common::{ack_violations, Item, Provider};
use contextgraph_types::validate::Anchor;
use serde_json::json;

fn anchors_of(ack: &serde_json::Value) -> Vec<Anchor> {
    ack_violations(ack).into_iter().map(|v| v.anchor).collect()
}

#[test]
fn h1_wrong_version_acks_contextgraph_2_0() {
    let mut p = Provider::mode("wrong-version", &[]);
    let ack = p.handshake();
    assert_eq!(ack["protocol_version"], "contextgraph/2.0");
    assert_eq!(anchors_of(&ack), [Anchor::H3]);
}

#[test]
fn c5_scope_lie_declares_an_off_machine_scope_with_egress_false() {
    let mut p = Provider::mode("scope-lie", &[]);
    let ack = p.handshake();
    let flow = &ack["provider"]["data_flow"];
    assert_eq!(flow["egress"], false);
    assert_eq!(flow["egress_scopes"], json!(["third-party-index"]));
    assert_eq!(anchors_of(&ack), [Anchor::C5]);
}

#[test]
fn resolve_representation_lie_advertises_compact_without_resolve() {
    let mut p = Provider::mode("representation-lie", &[]);
    let ack = p.handshake();
    assert_eq!(
        ack["capabilities"]["representations"],
        json!(["full", "compact"])
    );
    assert_eq!(ack["capabilities"]["resolve"], false);
    assert_eq!(anchors_of(&ack), [Anchor::Resolve]);
}

#[test]
fn c1_egress_declares_egress_without_scopes() {
    let mut p = Provider::mode("egress", &[]);
    let ack = p.handshake();
    let flow = &ack["provider"]["data_flow"];
    assert_eq!(flow["egress"], true);
    assert!(flow.get("egress_scopes").is_none(), "{flow}");
    assert!(anchors_of(&ack).is_empty(), "honest, merely gated");
}

#[test]
fn c6_egress_scope_declares_third_party_model() {
    let mut p = Provider::mode("egress-scope", &[]);
    let ack = p.handshake();
    let flow = &ack["provider"]["data_flow"];
    assert_eq!(flow["egress"], true);
    assert_eq!(flow["egress_scopes"], json!(["third-party-model"]));
    assert!(anchors_of(&ack).is_empty(), "honest, merely gated");
}

#[test]
fn framing_stdout_log_prints_a_log_line_before_the_ack() {
    let mut p = Provider::mode("stdout-log", &[]);
    p.send(&json!({"type": "handshake", "protocol_version": "contextgraph/1.0-draft"}));
    assert_eq!(p.next_item(), Some(Item::Line(b"starting up...".to_vec())));
    assert_eq!(p.recv()["type"], "handshake_ack");
}

#[test]
fn h3_echo_version_claims_whatever_family_the_host_names() {
    let mut p = Provider::mode("echo-version", &[]);
    p.send(&json!({"type": "handshake", "protocol_version": "contextgraph/2.0"}));
    let ack = p.recv();
    assert_eq!(ack["type"], "handshake_ack", "{ack}");
    assert_eq!(ack["protocol_version"], "contextgraph/2.0");
}
