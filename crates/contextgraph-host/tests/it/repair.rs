//! The host repair policy against providers that behave like the other CGP
//! implementations (`contextgraph_testkit::foreign`): what is repaired is
//! accepted with a "repaired" record, what breaks a guarantee is still
//! quarantined whole, `strict` quarantines both; providers are keyed by the
//! host, so two that announce the same name work side by side; `verify`
//! talks back with the provider's own digest; reports count a quarantined
//! answer's frames.

use contextgraph_compose::{compose, Budget, Options};
use contextgraph_host::{
    AuditPolicy, FrameCache, Host, HostError, HostOptions, ProviderOutcome, RepairKind,
};
use contextgraph_provider_sdk::sha256_digest;
use contextgraph_testkit::foreign::{Foreign, ForeignProvider, PLACEHOLDER_DIGEST};
use contextgraph_types::validate::Anchor;
use contextgraph_types::{ContextQuery, LineRange};

use crate::common::PATIENCE;

fn query(max_frames: u32) -> ContextQuery {
    ContextQuery::new("retry backoff delay", max_frames, 4000)
}

async fn host(policy: AuditPolicy, providers: &[(&str, &str, &[Foreign])]) -> Host {
    let mut options = HostOptions::default();
    options.audit = policy;
    let mut host = Host::new(options);
    for (key, name, behaviours) in providers {
        host.add_in_process_as(key, ForeignProvider::new(*name, behaviours))
            .await
            .unwrap_or_else(|e| panic!("adding {key}: {e}"));
    }
    host
}

fn anchors_of(outcome: &ProviderOutcome) -> Vec<Anchor> {
    match outcome {
        ProviderOutcome::Quarantined { violations, .. } => {
            let mut a: Vec<Anchor> = violations.iter().map(|v| v.anchor).collect();
            a.sort();
            a.dedup();
            a
        }
        other => panic!("expected a quarantine, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_digests_and_short_ranges_are_repaired_recorded_and_the_frames_kept() {
    let cases: &[(&str, &[Foreign], &[RepairKind])] = &[
        (
            "file-digest",
            &[Foreign::FileDigest],
            &[RepairKind::ContentDigest],
        ),
        (
            "placeholder",
            &[Foreign::PlaceholderDigest],
            &[RepairKind::ContentDigest],
        ),
        (
            "short-ranges",
            &[Foreign::ShortRanges],
            &[RepairKind::SingleLineRange],
        ),
        (
            "both",
            &[Foreign::FileDigest, Foreign::ShortRanges],
            &[RepairKind::ContentDigest, RepairKind::SingleLineRange],
        ),
    ];
    let providers: Vec<(&str, &str, &[Foreign])> =
        cases.iter().map(|(k, b, _)| (*k, *k, *b)).collect();
    let host = host(AuditPolicy::Repair, &providers).await;
    let report = host.query_all(&query(10), PATIENCE).await;
    for (key, _, kinds) in cases {
        let ProviderOutcome::Accepted {
            frames, repairs, ..
        } = &report.provider(key).expect("reported").outcome
        else {
            panic!("{key}: {:?}", report.provider(key));
        };
        assert_eq!(frames.len(), 4, "{key}: every frame kept");
        for kind in *kinds {
            assert!(
                repairs.iter().any(|r| r.kind == *kind),
                "{key}: no {kind:?} repair in {repairs:?}"
            );
        }
        assert!(
            repairs.iter().all(|r| kinds.contains(&r.kind)),
            "{key}: {repairs:?}"
        );
        for frame in frames {
            // D1 holds on what the host keeps: the digest is the content's.
            let content = frame.content.as_deref().unwrap();
            assert_eq!(
                frame.content_digest.as_deref(),
                Some(sha256_digest(content.as_bytes()).as_str()),
                "{key}"
            );
            for p in &frame.provenance {
                let range = p.range.as_deref().unwrap();
                assert!(LineRange::parse(range).is_some(), "{key}: {range}");
            }
        }
        for r in repairs {
            let text = r.to_string();
            match r.kind {
                RepairKind::ContentDigest => {
                    assert!(
                        text.starts_with(
                            "repaired: D1 — declared digest was not of the content; recomputed"
                        ),
                        "{text}"
                    );
                    assert_ne!(r.declared, r.repaired);
                }
                RepairKind::SingleLineRange => {
                    assert!(text.starts_with("repaired: F5 — "), "{text}");
                    assert_eq!(format!("{}-{}", r.declared, &r.declared[1..]), r.repaired);
                }
                other => panic!("unexpected repair {other:?}"),
            }
        }
    }
    let placeholder = &report.provider("placeholder").unwrap().outcome;
    if let ProviderOutcome::Accepted { repairs, .. } = placeholder {
        assert!(repairs.iter().all(|r| r.declared == PLACEHOLDER_DIGEST));
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_max_frames_is_quarantined_whole_and_a_repairable_fault_does_not_save_a_lie() {
    let host = host(
        AuditPolicy::Repair,
        &[
            ("flood", "flood", &[Foreign::IgnoreMaxFrames]),
            (
                "digest-and-flood",
                "digest-and-flood",
                &[Foreign::FileDigest, Foreign::IgnoreMaxFrames],
            ),
        ],
    )
    .await;
    let report = host.query_all(&query(2), PATIENCE).await;
    let flood = &report.provider("flood").unwrap().outcome;
    assert_eq!(anchors_of(flood), vec![Anchor::B4]);
    // Both faults are reported; the repairable one is not repaired.
    let both = &report.provider("digest-and-flood").unwrap().outcome;
    assert_eq!(anchors_of(both), vec![Anchor::D1, Anchor::B4]);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_quarantines_what_the_default_policy_repairs() {
    let host = host(
        AuditPolicy::Strict,
        &[
            ("file-digest", "a", &[Foreign::FileDigest]),
            ("placeholder", "b", &[Foreign::PlaceholderDigest]),
            ("short-ranges", "c", &[Foreign::ShortRanges]),
            ("honest", "d", &[]),
        ],
    )
    .await;
    let report = host.query_all(&query(10), PATIENCE).await;
    assert_eq!(
        anchors_of(&report.provider("file-digest").unwrap().outcome),
        vec![Anchor::D1]
    );
    assert_eq!(
        anchors_of(&report.provider("placeholder").unwrap().outcome),
        vec![Anchor::D1]
    );
    assert_eq!(
        anchors_of(&report.provider("short-ranges").unwrap().outcome),
        vec![Anchor::F5]
    );
    assert!(matches!(
        &report.provider("honest").unwrap().outcome,
        ProviderOutcome::Accepted { repairs, .. } if repairs.is_empty()
    ));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quarantined_answer_is_counted_as_offered_and_rejected_in_every_report() {
    let host = host(
        AuditPolicy::Repair,
        &[("flood", "flood", &[Foreign::IgnoreMaxFrames])],
    )
    .await;
    let report = host.query_all(&query(2), PATIENCE).await;
    let pr = report.provider("flood").unwrap();
    let ProviderOutcome::Quarantined {
        frames_offered,
        offered,
        frames,
        ..
    } = &pr.outcome
    else {
        panic!("{:?}", pr.outcome)
    };
    assert_eq!((*frames_offered, offered.len(), frames.len()), (4, 4, 4));
    // The host's usage report (UR1).
    let usage = report.usage_report();
    let p = &usage.providers[0];
    assert_eq!((p.frames_rejected, p.served_frames.len()), (4, 0));
    // The composition audit, fed the way every front end feeds it: the
    // host's mapping with nothing extra passed in.
    let composed = compose(
        &[pr.outcome.to_composition(&pr.provider_id, Vec::new())],
        &Options::new(Budget::budget_tokens(8000)),
    )
    .unwrap();
    let audit = &composed.audit.providers[0];
    assert_eq!((audit.frames_offered, audit.frames_included), (4, 0));
    assert_eq!(
        composed.audit.frames.len(),
        4,
        "one entry per offered frame"
    );
    assert_eq!(composed.usage.providers[0].frames_rejected, 4);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repair_reaches_the_composition_audit() {
    let host = host(
        AuditPolicy::Repair,
        &[("docs", "docs", &[Foreign::FileDigest, Foreign::ShortRanges])],
    )
    .await;
    let report = host.query_all(&query(10), PATIENCE).await;
    let pr = report.provider("docs").unwrap();
    let composed = compose(
        &[pr.outcome.to_composition(&pr.provider_id, Vec::new())],
        &Options::new(Budget::budget_tokens(8000)),
    )
    .unwrap();
    let audit = &composed.audit.providers[0];
    assert_eq!(audit.frames_included, 4, "{}", audit.explain());
    assert!(audit.repairs.iter().any(|r| r.anchor == "D1"));
    assert!(audit.repairs.iter().any(|r| r.anchor == "F5"));
    assert!(
        audit
            .explain()
            .contains("repaired: D1 — declared digest was not of the content; recomputed"),
        "{}",
        audit.explain()
    );
    let page = contextgraph_compose::html::render(&composed);
    assert!(
        page.contains("repaired: D1 — declared digest was not of the content; recomputed"),
        "the HTML report shows the repairs"
    );
    // Citations name frames by the host's identity: recomputed digests.
    for c in &composed.citations {
        let frame = &c.frame;
        assert_eq!(frame.provider_id, "docs");
        assert_ne!(
            frame.content_digest.as_deref(),
            Some(sha256_digest(contextgraph_testkit::foreign::FILE_TEXT.as_bytes()).as_str())
        );
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_providers_announcing_one_name_work_side_by_side_under_their_keys() {
    let host = host(
        AuditPolicy::Repair,
        &[("docs-a", "docs", &[]), ("docs-b", "docs", &[])],
    )
    .await;
    assert_eq!(host.provider_ids(), ["docs-a", "docs-b"]);
    let report = host.query_all(&query(10), PATIENCE).await;
    for key in ["docs-a", "docs-b"] {
        let ProviderOutcome::Accepted { frames, .. } = &report.provider(key).unwrap().outcome
        else {
            panic!("{key}: {:?}", report.provider(key));
        };
        assert_eq!(frames.len(), 4, "{key}");
    }
    let keys: Vec<&str> = report.accepted_frames().map(|(k, _)| k).collect();
    assert_eq!(keys.iter().filter(|k| **k == "docs-a").count(), 4);
    assert_eq!(keys.iter().filter(|k| **k == "docs-b").count(), 4);
    let usage = report.usage_report();
    assert!(usage.is_coherent());
    assert!(usage.providers[1]
        .served_frames
        .iter()
        .all(|s| s.frame.provider_id == "docs-b"));
    // Without keys, the second one is refused: its name is taken.
    let mut unkeyed = Host::new(HostOptions::default());
    unkeyed
        .add_in_process(ForeignProvider::new("docs", &[]))
        .await
        .unwrap();
    let err = unkeyed
        .add_in_process(ForeignProvider::new("docs", &[]))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::DuplicateProvider { .. }), "{err}");
    // A key is unique too.
    let mut keyed = Host::new(HostOptions::default());
    keyed
        .add_in_process_as("k", ForeignProvider::new("a", &[]))
        .await
        .unwrap();
    assert!(keyed
        .add_in_process_as("k", ForeignProvider::new("b", &[]))
        .await
        .is_err());
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_presents_the_providers_own_digest_under_the_hosts_key() {
    let host = host(
        AuditPolicy::Repair,
        &[("mine", "foreign", &[Foreign::FileDigest])],
    )
    .await;
    let report = host.query_all(&query(10), PATIENCE).await;
    let mut cache = FrameCache::new();
    cache.insert_report(&report);
    assert_eq!(cache.len(), 4);
    for id in cache.ids() {
        // Held under the host's identity: its key, the recomputed digest.
        assert_eq!(id.provider_id, "mine");
        let frame = cache.get(id).unwrap();
        let recomputed = sha256_digest(frame.content.as_deref().unwrap().as_bytes());
        assert_eq!(id.content_digest.as_deref(), Some(recomputed.as_str()));
        // Presented to the provider with the digest it declared.
        assert_eq!(
            cache.wire_id(id).content_digest,
            Some(sha256_digest(
                contextgraph_testkit::foreign::FILE_TEXT.as_bytes()
            ))
        );
    }
    let outcome = host.revalidate(&mut cache, PATIENCE).await;
    assert_eq!(outcome.reusable.len(), 4, "{outcome:?}");
    assert!(outcome.evicted.is_empty(), "{outcome:?}");
    assert!(outcome.reusable.iter().all(|id| id.provider_id == "mine"));

    // Presenting the host's recomputed digest instead, the provider cannot
    // recognise its frames: that is what the declared digest is kept for.
    let mut naive = FrameCache::new();
    for (key, frame) in report.accepted_frames() {
        naive.insert(key, frame.clone());
    }
    let outcome = host.revalidate(&mut naive, PATIENCE).await;
    assert!(outcome.reusable.is_empty(), "{outcome:?}");
    assert_eq!(outcome.evicted.len(), 4);
    host.shutdown().await;
}
