//! Every request has a deadline: a slow provider is reported as timed out by
//! the fan-out deadline while its healthy neighbour is accepted, and its late
//! reply is never taken as the answer to the next request.

use std::time::Duration;

use crate::common::{misbehaving, retry_query, stdio_options, PATIENCE};
use contextgraph_host::{
    Answer, Host, HostOptions, ProviderClient, ProviderOutcome, StdioProvider,
};
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_slow_provider_times_out_and_neighbour_is_accepted() {
    let mut host = Host::new(HostOptions::default());
    host.add_stdio(
        misbehaving("slow-reply", "sloth").args(["--delay-ms", "1500"]),
        stdio_options(),
    )
    .await
    .expect("added");
    host.add_stdio(misbehaving("normal", "quick"), stdio_options())
        .await
        .expect("added");
    let started = std::time::Instant::now();
    let report = host
        .query_all(&retry_query(), Duration::from_millis(300))
        .await;
    assert!(
        started.elapsed() < Duration::from_millis(1200),
        "fan-out overran: {:?}",
        started.elapsed()
    );
    assert!(matches!(
        report.provider("sloth").unwrap().outcome,
        ProviderOutcome::TimedOut { .. }
    ));
    assert!(matches!(
        report.provider("quick").unwrap().outcome,
        ProviderOutcome::Accepted { .. }
    ));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_late_correlated_reply_from_a_real_process_is_dropped() {
    let command = misbehaving("slow-reply", "sloth").args(["--delay-ms", "300"]);
    let provider = StdioProvider::new(command, stdio_options());
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    let first = provider
        .query(&retry_query(), Instant::now() + Duration::from_millis(50))
        .await;
    assert!(first.as_ref().is_err_and(|e| e.is_timeout()), "{first:?}");
    let mut other = retry_query();
    other.max_frames = 1;
    let second = provider
        .query(&other, Instant::now() + PATIENCE)
        .await
        .expect("answered");
    match second {
        Answer::Frames(r) => assert!(
            r.frames.len() <= 1,
            "got the late 5-frame reply to the first query"
        ),
        a => panic!("{a:?}"),
    }
    assert_eq!(provider.diagnostics().unwrap().late_replies, 1);
    provider.shutdown().await;
}
