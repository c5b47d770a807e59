//! A crashed provider is reported as crashed with its stderr tail, is
//! respawned (after a backoff) on a later request when allowed, and stays
//! down when not; its neighbours are unaffected.

use std::time::Duration;

use crate::common::{misbehaving, retry_query, stdio_options, PATIENCE};
use contextgraph_host::{
    Host, HostOptions, ProviderClient, ProviderOutcome, RequestError, StdioProvider,
};
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_mid_query_is_reported_with_stderr_and_healthy_neighbour_unaffected() {
    let mut host = Host::new(HostOptions::default());
    host.add_stdio(misbehaving("crash-on-query", "fragile"), stdio_options())
        .await
        .expect("added");
    host.add_stdio(misbehaving("normal", "sturdy"), stdio_options())
        .await
        .expect("added");
    let report = host.query_all(&retry_query(), PATIENCE).await;
    match &report.provider("fragile").unwrap().outcome {
        ProviderOutcome::Crashed {
            status,
            stderr_tail,
        } => {
            assert!(status.contains('3'), "{status}");
            assert!(!stderr_tail.is_empty(), "no stderr tail captured");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        report.provider("sturdy").unwrap().outcome,
        ProviderOutcome::Accepted { .. }
    ));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_is_respawned_after_backoff_on_a_later_request() {
    let provider = StdioProvider::new(misbehaving("crash-on-query", "phoenix"), stdio_options());
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    let first_pid = provider.pid().expect("running");
    let crashed = provider
        .query(&retry_query(), Instant::now() + PATIENCE)
        .await;
    assert!(
        matches!(crashed, Err(RequestError::Crashed { .. })),
        "{crashed:?}"
    );
    // Within the backoff the provider is not restarted.
    let early = provider.ready(Instant::now() + PATIENCE).await;
    assert!(
        matches!(early, Err(RequestError::Backoff { .. })),
        "{early:?}"
    );
    tokio::time::sleep(Duration::from_millis(60)).await;
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("respawned");
    assert_ne!(
        provider.pid(),
        Some(first_pid),
        "a new process was expected"
    );
    provider.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_without_respawn_permission_stays_down() {
    let mut options = stdio_options();
    options.respawn.enabled = false;
    let provider = StdioProvider::new(misbehaving("crash-on-query", "mortal"), options);
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    let _ = provider
        .query(&retry_query(), Instant::now() + PATIENCE)
        .await;
    let again = provider.ready(Instant::now() + PATIENCE).await;
    match again {
        Err(RequestError::Down { provider, last }) => {
            assert_eq!(provider, "mortal");
            assert!(last.contains("crashed"), "{last}");
        }
        other => panic!("{other:?}"),
    }
}
