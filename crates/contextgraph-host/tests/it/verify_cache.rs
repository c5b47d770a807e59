//! Verification and reuse (V1–V4, D3, D4): reuse only on an explicit
//! `valid`; everything else evicts; verify only to providers that declared it.

use crate::common::{host_with, retry_query, PATIENCE};
use contextgraph_host::{EvictionReason, FrameCache};
use contextgraph_types::{ContextFrame, FrameKind};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v3_valid_frames_are_kept_and_everything_else_evicted() {
    let host = host_with(&[
        ("normal", "honest"),
        ("hollow-verify", "hollow"),
        ("lockstep", "plain"),
    ])
    .await;
    let report = host.query_all(&retry_query(), PATIENCE).await;
    let mut cache = FrameCache::new();
    cache.insert_report(&report);
    // A digest-less frame is never reused unchecked (D3).
    cache.insert(
        "honest",
        ContextFrame::new("no-digest", FrameKind::Doc, "t", "c"),
    );
    // A frame whose digest the provider does not serve is not `valid`.
    let mut altered = ContextFrame::new("docs/retry.md#L1-10", FrameKind::Doc, "t", "changed");
    altered.content_digest = Some(format!("sha256:{}", "1".repeat(64)));
    cache.insert("honest", altered.clone());
    let held = cache.len();
    assert!(held > 3);
    let outcome = host.revalidate(&mut cache, PATIENCE).await;
    assert_eq!(outcome.reusable.len() + outcome.evicted.len(), held);
    assert!(
        !outcome.reusable.is_empty(),
        "the honest provider's frames should be valid"
    );
    // The lock-step provider verifies honestly too; the hollow one never confirms.
    assert!(outcome.reusable.iter().all(|id| id.provider_id != "hollow"));
    assert!(
        outcome.reusable.iter().any(|id| id.provider_id == "plain"),
        "lock-step verify works"
    );
    assert_eq!(cache.len(), outcome.reusable.len());
    let reason = |pred: &dyn Fn(&EvictionReason) -> bool| {
        outcome.evicted.iter().filter(|(_, r)| pred(r)).count()
    };
    assert_eq!(reason(&|r| matches!(r, EvictionReason::NoDigest)), 1);
    assert!(
        reason(&|r| matches!(r, EvictionReason::Unknown)) > 0,
        "hollow verdicts must evict"
    );
    let altered_id = altered.frame_id("honest");
    assert!(outcome
        .evicted
        .iter()
        .any(|(id, r)| id == &altered_id && !matches!(r, EvictionReason::NoDigest)));
    host.shutdown().await;
}
