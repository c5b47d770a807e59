//! Host memory stays bounded (a few MiB above the line cap) under a provider
//! that streams an endless line and under one that floods frames. Alone in
//! its own test binary so no other test's allocations blur the measurement.
//!
//! Process isolation needed: it measures the process's resident set, so it
//! is the one host test kept out of the `it` binary.

#[path = "it/common/mod.rs"]
mod common;

use common::{misbehaving, retry_query, stdio_options, PATIENCE};
use contextgraph_host::{
    ConnectionError, Host, HostOptions, ProviderClient, ProviderOutcome, RequestError,
    StdioProvider,
};
use tokio::time::Instant;

const CAP: usize = 4 << 20;
const SLACK: u64 = 8 << 20;

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .expect("VmRSS")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_cap_bounds_memory_under_an_endless_line_and_a_frame_flood() {
    let mut options = stdio_options();
    options.connection.max_line_bytes = CAP;
    let endless = StdioProvider::new(misbehaving("endless-line", "endless"), options.clone());
    endless
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    let before = rss_bytes();
    // The reply never ends; the host reads (and discards) past the cap plus
    // the runaway allowance, then declares the session broken (§1).
    let answer = endless
        .query(&retry_query(), Instant::now() + PATIENCE * 3)
        .await;
    assert!(
        matches!(
            answer,
            Err(RequestError::Connection(
                ConnectionError::RunawayLine { .. }
            ))
        ),
        "{answer:?}"
    );
    let grown = rss_bytes().saturating_sub(before);
    assert!(
        grown < CAP as u64 + SLACK,
        "memory grew by {grown} bytes under an endless line"
    );
    endless.shutdown().await;

    let mut host = Host::new(HostOptions::default());
    host.add_stdio(misbehaving("frame-flood", "flood"), options)
        .await
        .expect("added");
    let before = rss_bytes();
    let report = host.query_all(&retry_query(), PATIENCE).await;
    assert!(matches!(
        report.provider("flood").unwrap().outcome,
        ProviderOutcome::Quarantined { .. }
    ));
    let grown = rss_bytes().saturating_sub(before);
    assert!(
        grown < CAP as u64 + SLACK,
        "memory grew by {grown} bytes under a frame flood"
    );
    host.shutdown().await;
}
