//! Runtime audit (B2): a provider breaking B1, B3, B4, F1–F4, D1, Q1 or
//! `as_of` has its whole answer quarantined with a report naming the rule —
//! never silently truncated — while a healthy provider beside it is unaffected.
//! The one D1 fault the host repairs (a well-formed digest of other bytes,
//! see `repair.rs`) is accepted repaired, and quarantined under `strict`.

use crate::common::{host_with, misbehaving, retry_query, stdio_options, PATIENCE};
use contextgraph_host::{AuditPolicy, Host, HostOptions, ProviderOutcome, RepairKind};
use contextgraph_types::validate::Anchor;
use contextgraph_types::FrameKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b2_every_lie_is_quarantined_with_its_anchor_and_the_honest_provider_is_accepted() {
    let cases: &[(&str, Anchor)] = &[
        ("lying-cost", Anchor::B3),
        ("under-reported-cost", Anchor::B3),
        ("budget-overrun", Anchor::B1),
        ("frame-flood", Anchor::B4),
        ("bad-score", Anchor::F1),
        ("empty-title", Anchor::F2),
        ("empty-citation", Anchor::F3),
        ("bad-timestamp", Anchor::F4),
        ("malformed-digest", Anchor::D1),
        ("ignored-kinds", Anchor::Q1),
        ("ignored-as-of", Anchor::AsOf),
    ];
    let mut providers: Vec<(&str, &str)> = cases.iter().map(|(m, _)| (*m, *m)).collect();
    providers.push(("normal", "honest"));
    providers.push(("digest-mismatch", "digest-mismatch"));
    let host = host_with(&providers).await;
    let mut query = retry_query();
    // Q1 and as_of need a filter and a pin to be broken.
    query.kinds = vec![FrameKind::Doc];
    query.as_of = Some("2025-01-01T00:00:00Z".into());
    query.max_tokens = 600;
    let report = host.query_all(&query, PATIENCE).await;
    for (mode, anchor) in cases {
        let outcome = &report.provider(mode).expect("reported").outcome;
        match outcome {
            ProviderOutcome::Quarantined {
                violations,
                frames_offered,
                offered,
                frames,
            } => {
                assert_eq!(frames.len(), *frames_offered, "{mode}");
                assert!(
                    violations.iter().any(|v| v.anchor == *anchor),
                    "{mode}: expected {anchor}, got {violations:?}"
                );
                assert!(
                    *frames_offered > 0 && offered.len() == *frames_offered,
                    "{mode}"
                );
            }
            other => panic!("{mode}: expected quarantine for {anchor}, got {other:?}"),
        }
    }
    match &report.provider("honest").unwrap().outcome {
        ProviderOutcome::Accepted { frames, .. } => assert!(!frames.is_empty()),
        other => panic!("the honest provider was affected: {other:?}"),
    }
    match &report.provider("digest-mismatch").unwrap().outcome {
        ProviderOutcome::Accepted {
            frames, repairs, ..
        } => {
            assert!(!frames.is_empty());
            assert_eq!(repairs.len(), 1, "{repairs:?}");
            assert_eq!(repairs[0].kind, RepairKind::ContentDigest);
        }
        other => panic!("a digest of other bytes is repaired, not quarantined: {other:?}"),
    }
    let usage = report.usage_report();
    assert!(usage.is_coherent());
    for (mode, _) in cases {
        let p = usage
            .providers
            .iter()
            .find(|p| p.provider_id == *mode)
            .unwrap();
        assert!(
            p.served_frames.is_empty(),
            "{mode}: a quarantined frame was billed"
        );
        assert!(p.frames_rejected > 0, "{mode}");
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_quarantines_a_digest_of_other_bytes() {
    let mut options = HostOptions::default();
    options.audit = AuditPolicy::Strict;
    let mut host = Host::new(options);
    host.add_stdio(misbehaving("digest-mismatch", "liar"), stdio_options())
        .await
        .unwrap();
    let report = host.query_all(&retry_query(), PATIENCE).await;
    match &report.provider("liar").unwrap().outcome {
        ProviderOutcome::Quarantined { violations, .. } => {
            assert!(
                violations.iter().all(|v| v.anchor == Anchor::D1),
                "{violations:?}"
            );
        }
        other => panic!("expected a D1 quarantine, got {other:?}"),
    }
    host.shutdown().await;
}
