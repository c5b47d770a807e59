//! Handshake checks: each failure is a typed error naming the provider and
//! the anchor, and none of them hangs.

use std::time::Duration;

use crate::common::peer::{ack, connect, script};
use crate::common::{misbehaving, stdio_options, PATIENCE};
use contextgraph_host::{
    ConnectionOptions, HandshakeError, InProcessProvider, ProviderClient, RequestError,
    StdioProvider, TransportKind,
};
use contextgraph_provider_sdk::{Provider, ProviderError};
use contextgraph_types::validate::Anchor;
use contextgraph_types::{
    Capabilities, ContextQuery, ContextQueryResult, DataFlow, EgressScope, ProviderInfo,
};
use tokio::time::Instant;

async fn stdio_handshake(mode: &str) -> Result<(), RequestError> {
    let provider = StdioProvider::new(misbehaving(mode, mode), stdio_options());
    let result = provider.ready(Instant::now() + PATIENCE).await.map(|_| ());
    provider.shutdown().await;
    result
}

fn rejected_with(result: Result<(), RequestError>, anchor: Anchor) -> String {
    match result {
        Err(RequestError::Handshake(e)) => {
            assert!(e.anchors().contains(&anchor), "expected {anchor}: {e}");
            e.to_string()
        }
        other => panic!("expected a handshake rejection for {anchor}, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h1_normal_provider_handshakes() {
    let provider = StdioProvider::new(misbehaving("normal", "fine"), stdio_options());
    let d = provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    assert_eq!(d.id, "fine");
    assert!(matches!(d.transport, TransportKind::Stdio { .. }));
    provider.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_foreign_version_family_is_rejected_naming_the_provider() {
    let text = rejected_with(stdio_handshake("wrong-version").await, Anchor::H3);
    assert!(text.contains("wrong-version"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c5_off_machine_scope_with_egress_false_is_rejected() {
    rejected_with(stdio_handshake("scope-lie").await, Anchor::C5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_compact_without_resolve_is_rejected() {
    rejected_with(stdio_handshake("representation-lie").await, Anchor::Resolve);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h1_stdout_log_before_the_ack_is_a_clear_error_not_a_hang() {
    let started = std::time::Instant::now();
    match stdio_handshake("stdout-log").await {
        Err(RequestError::Handshake(HandshakeError::NotProtocol { line, .. })) => {
            assert!(line.contains("starting up"), "{line}");
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_silent_peer_times_out_within_the_handshake_bound() {
    let silent = Box::new(|_: &serde_json::Value| vec![]) as crate::common::peer::Script;
    let mut options = ConnectionOptions::default();
    options.handshake_timeout = Duration::from_millis(100);
    let started = std::time::Instant::now();
    let result = connect(silent, options).await;
    assert!(
        matches!(result, Err(HandshakeError::Timeout { .. })),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_incompatible_version_error_reply_is_typed() {
    let peer: crate::common::peer::Script = Box::new(|_| {
        vec![(
            Duration::ZERO,
            r#"{"type":"error","code":"incompatible_version","message":"I speak contextgraph/2"}"#
                .to_owned(),
        )]
    });
    let result = connect(peer, ConnectionOptions::default()).await;
    assert!(
        matches!(result, Err(HandshakeError::IncompatibleVersion { .. })),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h1_ack_from_a_scripted_peer_is_accepted() {
    let conn = connect(
        script(ack("ok", true, true), |_| vec![]),
        ConnectionOptions::default(),
    )
    .await
    .expect("handshake");
    assert!(conn.descriptor().capabilities.correlation);
}

struct Declares {
    info: ProviderInfo,
    caps: Capabilities,
}

impl Provider for Declares {
    fn info(&self) -> ProviderInfo {
        self.info.clone()
    }
    fn capabilities(&self) -> Capabilities {
        self.caps.clone()
    }
    fn query(&self, _: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        Ok(ContextQueryResult::default())
    }
}

fn declares(name: &str, version: &str) -> Declares {
    Declares {
        info: ProviderInfo {
            name: name.into(),
            version: version.into(),
            data_flow: DataFlow::default(),
        },
        caps: Capabilities::default(),
    }
}

#[test]
fn h2_empty_name_or_version_is_rejected() {
    for (name, version) in [("", "1.0"), ("p", ""), ("  ", "1.0")] {
        let e = InProcessProvider::new(declares(name, version)).expect_err("rejected");
        assert!(e.anchors().contains(&Anchor::H2), "{e}");
    }
}

#[test]
fn e1_malformed_fingerprint_is_rejected() {
    let mut p = declares("fp", "1.0");
    p.caps.embeddings_fingerprint = Some("no-dimensions".into());
    let e = InProcessProvider::new(p).expect_err("rejected");
    assert!(e.anchors().contains(&Anchor::E1), "{e}");
    assert!(e.to_string().contains("fp"), "{e}");
}

#[test]
fn c5_in_process_scope_lie_is_rejected_too() {
    let mut p = declares("liar", "1.0");
    p.info.data_flow.egress_scopes = vec![EgressScope::ThirdPartyModel];
    let e = InProcessProvider::new(p).expect_err("rejected");
    assert!(e.anchors().contains(&Anchor::C5), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_a_name_longer_than_the_host_bound_is_rejected_not_copied_everywhere() {
    // The name becomes the provider id in every report: a peer must not be
    // able to make it as large as a line.
    let long = "n".repeat(contextgraph_host::handshake::MAX_NAME_BYTES + 1);
    let peer = script(ack(&long, true, false), |_| Vec::new());
    match connect(peer, ConnectionOptions::default()).await {
        Err(e @ HandshakeError::Rejected { .. }) => {
            assert!(e.anchors().contains(&Anchor::H2), "{e}");
            let text = e.to_string();
            assert!(text.contains("provider.name"), "{text}");
            assert!(
                text.len() < 2048,
                "the error stays short: {} bytes",
                text.len()
            );
        }
        other => panic!("expected an H2 rejection, got {other:?}"),
    }
}
