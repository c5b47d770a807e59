//! H1–H3: the handshake ack carries our version, identity and capabilities;
//! a version outside our family is a named error and the connection stays usable.

use crate::common::{expect_error, frame_ids, handshake_line, query_line, Host, TestProvider};
use contextgraph_provider_sdk::ServeOptions;
use contextgraph_types::PROTOCOL_VERSION;
use serde_json::json;

#[test]
fn h1_h2_ack_carries_protocol_version_info_and_capabilities() {
    let provider = TestProvider::new("ack-test")
        .correlated()
        .verifying()
        .fingerprint("bge-small-en-v1.5/384/l2");
    let mut host = Host::start(provider);
    host.send(&handshake_line("contextgraph/1.0-draft"));
    let ack = host.recv();
    assert_eq!(
        ack,
        json!({
            "type": "handshake_ack",
            "protocol_version": PROTOCOL_VERSION,
            "provider": {
                "name": "ack-test",
                "version": "0.1.0",
                "data_flow": {"reads": true, "writes": false, "egress": false}
            },
            "capabilities": {
                "query": {"kinds": ["doc", "snippet"]},
                "correlation": true,
                "graph": false,
                "embeddings_fingerprint": "bge-small-en-v1.5/384/l2",
                "verify": true,
                "resolve": false
            }
        })
    );
}

#[test]
fn h1_any_version_of_our_family_is_accepted() {
    for version in [
        "contextgraph/1.0",
        "contextgraph/1.7",
        "contextgraph/1.12-draft",
    ] {
        let mut host = Host::start(TestProvider::new("family"));
        host.send(&handshake_line(version));
        let ack = host.recv();
        assert_eq!(ack["type"], "handshake_ack", "{version}: {ack}");
        assert_eq!(ack["protocol_version"], PROTOCOL_VERSION);
    }
}

#[test]
fn h3_other_major_family_is_incompatible_version_naming_both_families() {
    let mut host = Host::start(TestProvider::new("h3-provider"));
    host.send(&handshake_line("contextgraph/2.0"));
    let message = expect_error(&host.recv(), "incompatible_version");
    assert!(message.contains("contextgraph/2"), "{message}");
    assert!(message.contains("contextgraph/1"), "{message}");
    assert!(message.contains("h3-provider"), "{message}");
    assert!(message.contains("H3"), "{message}");
}

#[test]
fn h3_garbage_version_is_incompatible_version() {
    for garbage in ["banana", "contextgraph/1", "ContextGraph/1.0", ""] {
        let mut host = Host::start(TestProvider::new("garbage"));
        host.send(&handshake_line(garbage));
        let message = expect_error(&host.recv(), "incompatible_version");
        assert!(message.contains("no family"), "{garbage:?}: {message}");
        assert!(message.contains("contextgraph/1"), "{message}");
    }
}

#[test]
fn h3_connection_stays_usable_after_a_rejected_handshake() {
    let mut host = Host::start_with(TestProvider::new("retry"), ServeOptions::default());
    host.send(&handshake_line("contextgraph/2.0"));
    expect_error(&host.recv(), "incompatible_version");
    // Still not handshaken: a query is refused.
    host.send(&query_line(None, "too early", 5, 100));
    let message = expect_error(&host.recv(), "bad_request");
    assert!(message.contains("handshake first"), "{message}");
    // A retry in our family succeeds and queries then work.
    host.send(&handshake_line("contextgraph/1.0"));
    assert_eq!(host.recv()["type"], "handshake_ack");
    host.send(&query_line(None, "now", 5, 100));
    assert_eq!(frame_ids(&host.recv()), ["frame-for:now"]);
}

#[test]
fn h1_repeated_handshake_is_answered_again() {
    let mut host = Host::start(TestProvider::new("twice"));
    for _ in 0..2 {
        host.send(&handshake_line(PROTOCOL_VERSION));
        assert_eq!(host.recv()["type"], "handshake_ack");
    }
}
