//! The per-frame passes run on several threads; the composition must not
//! depend on how many (D2: the same set of frames composes to the same bytes).

use crate::workload;

use contextgraph_compose::{
    compose, sha256_digest, Budget, Composition, Exclusion, Options, Placement, ProviderOutcome,
    ProviderStatus,
};

fn with_threads(outcomes: &[ProviderOutcome], options: &Options, threads: usize) -> Composition {
    compose(outcomes, &options.clone().with_threads(threads)).expect("composes")
}

/// The bench workload, made hostile: some declared digests are wrong (D1),
/// and some frames share length, first and last bytes with another frame
/// while differing in the middle (so a fingerprint match is not equality).
fn hostile_workload() -> Vec<ProviderOutcome> {
    let mut outcomes = workload::candidates(2400);
    for (p, o) in outcomes.iter_mut().enumerate() {
        let ProviderStatus::Accepted { frames } = &mut o.status else {
            continue;
        };
        let template = frames[0].content.clone().expect("content");
        for (i, f) in frames.iter_mut().enumerate() {
            if i % 37 == 5 {
                f.content_digest = Some(sha256_digest(b"somebody else's content"));
            } else if i % 41 == 7 {
                // Same length, same edges as the template, one byte different.
                let mut bytes = template.clone().into_bytes();
                let mid = bytes.len() / 2;
                bytes[mid] = if bytes[mid] == b'x' { b'y' } else { b'x' };
                let text = String::from_utf8(bytes).unwrap_or_else(|_| template.clone());
                // Undeclared, so its fingerprint is its length and edges.
                f.content_digest = None;
                f.content = Some(text);
            } else if i % 47 == 11 {
                // An undeclared exact copy: same fingerprint as the near-copies.
                f.content = Some(template.clone());
                f.content_digest = None;
            } else if i % 43 == 9 && p % 2 == 0 {
                // Byte-identical to the template, so found by the fingerprint.
                f.content = Some(template.clone());
                f.content_digest = Some(sha256_digest(template.as_bytes()));
            }
        }
    }
    outcomes
}

#[test]
fn d2_multithreaded_composition_equals_single_threaded_on_the_bench_workload() {
    // Compositions compared across calls: the fence seed fixed (see
    // `common::budget`).
    contextgraph_compose::fence::set_fence_seed(Some(0));
    let outcomes = workload::candidates(3000);
    for placement in [Placement::Stable, Placement::Ranked] {
        let options = Options::new(Budget::budget_tokens(300_000)).with_placement(placement);
        let one = with_threads(&outcomes, &options, 1);
        for threads in [2, 3, 8] {
            assert_eq!(
                with_threads(&outcomes, &options, threads),
                one,
                "{placement:?} with {threads} threads"
            );
        }
    }
}

#[test]
fn d1_multithreaded_composition_equals_single_threaded_on_hostile_frames() {
    contextgraph_compose::fence::set_fence_seed(Some(0));
    let outcomes = hostile_workload();
    let options = Options::new(Budget::budget_tokens(200_000));
    let one = with_threads(&outcomes, &options, 1);
    let mismatches = one
        .audit
        .frames
        .iter()
        .filter(|f| matches!(f.exclusion(), Some(Exclusion::DigestMismatch { .. })))
        .count();
    assert!(mismatches > 0, "the workload exercises D1");
    let key =
        |f: &contextgraph_compose::FrameAudit| (f.frame.clone(), f.content_sha256, f.token_cost);
    assert!(
        one.audit
            .frames
            .windows(2)
            .all(|w| key(&w[0]) <= key(&w[1])),
        "audit entries, early exclusions merged in, are in canonical order"
    );
    for threads in [2, 5] {
        assert_eq!(with_threads(&outcomes, &options, threads), one);
    }
}

#[test]
fn d1_content_sharing_a_fingerprint_is_hashed_not_assumed_equal() {
    let outcomes = hostile_workload();
    let c = with_threads(&outcomes, &Options::new(Budget::budget_tokens(1000)), 2);
    for o in &outcomes {
        for f in o.offered_frames() {
            let entry = c
                .audit
                .frames
                .iter()
                .find(|e| e.frame.provider_id == o.provider_id && e.frame.frame_id == f.id)
                .expect("every offered frame is audited");
            let content = f.content.as_deref().expect("content");
            assert_eq!(
                entry.content_sha256.map(|d| d.to_string()),
                Some(sha256_digest(content.as_bytes())),
                "{}: the recorded digest is the digest of its own bytes",
                entry.frame
            );
        }
    }
}
