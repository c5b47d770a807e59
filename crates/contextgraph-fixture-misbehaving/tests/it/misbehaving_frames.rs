//! Frame-level misbehaviours: each mode breaks one frame rule (B3, F1, F2,
//! F3, F4, D1, F5) on one frame, and nothing else — observed on the wire.

use crate::common;

use common::{
    assert_breaks_only, disk_mismatches, frames_of, query, roomy_answer, roomy_query, violations,
    Provider,
};
use contextgraph_types::validate::Anchor;
use contextgraph_types::{is_sha256_digest, token_cost_for, ContextFrame};

fn dishonest_costs(frames: &[ContextFrame]) -> Vec<(&ContextFrame, u32)> {
    frames
        .iter()
        .filter(|f| !f.has_honest_token_cost())
        .map(|f| (f, token_cost_for(f.content.as_deref())))
        .collect()
}

#[test]
fn b3_lying_cost_overstates_one_frame_and_still_fits_the_budget() {
    let (mut p, result) = roomy_answer("lying-cost");
    assert_breaks_only(&result, &roomy_query(), Anchor::B3);
    let lies = dishonest_costs(&result.frames);
    assert_eq!(lies.len(), 1, "{lies:?}");
    assert!(lies[0].0.token_cost > lies[0].1, "overstated: {lies:?}");
    // With a tight budget the declared total still fits (B1 holds).
    let tight = query("retry policy", 5, 200);
    let result = frames_of(&p.query("t", &tight), "t");
    assert_breaks_only(&result, &tight, Anchor::B3);
}

#[test]
fn b3_under_reported_cost_understates_one_frame() {
    let (_p, result) = roomy_answer("under-reported-cost");
    assert_breaks_only(&result, &roomy_query(), Anchor::B3);
    let lies = dishonest_costs(&result.frames);
    assert_eq!(lies.len(), 1, "{lies:?}");
    assert!(lies[0].0.token_cost < lies[0].1, "understated: {lies:?}");
}

#[test]
fn f1_bad_score_scores_one_frame_1_5() {
    let (_p, result) = roomy_answer("bad-score");
    assert_breaks_only(&result, &roomy_query(), Anchor::F1);
    let bad: Vec<_> = result
        .frames
        .iter()
        .filter(|f| !f.has_valid_score())
        .collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].score, 1.5);
}

#[test]
fn f3_empty_citation_sends_one_empty_citation_label() {
    let (_p, result) = roomy_answer("empty-citation");
    assert_breaks_only(&result, &roomy_query(), Anchor::F3);
    let empty = result
        .frames
        .iter()
        .filter(|f| f.citation_label.as_deref() == Some(""))
        .count();
    assert_eq!(empty, 1);
}

#[test]
fn f2_empty_title_sends_one_empty_title() {
    let (_p, result) = roomy_answer("empty-title");
    assert_breaks_only(&result, &roomy_query(), Anchor::F2);
    assert_eq!(
        result.frames.iter().filter(|f| f.title.is_empty()).count(),
        1
    );
}

#[test]
fn f4_bad_timestamp_sends_a_space_separated_recorded_at() {
    let (_p, result) = roomy_answer("bad-timestamp");
    assert_breaks_only(&result, &roomy_query(), Anchor::F4);
    let bad = result
        .frames
        .iter()
        .filter(|f| f.recorded_at.as_deref() == Some("2026-07-20 18:00:00"))
        .count();
    assert_eq!(bad, 1);
}

#[test]
fn d1_malformed_digest_sends_a_truncated_digest() {
    let (_p, result) = roomy_answer("malformed-digest");
    assert_breaks_only(&result, &roomy_query(), Anchor::D1);
    let bad: Vec<_> = result
        .frames
        .iter()
        .filter(|f| f.content_digest.as_deref() == Some("sha256:abc"))
        .collect();
    assert_eq!(bad.len(), 1);
}

#[test]
fn d1_digest_mismatch_sends_a_well_formed_digest_of_other_bytes() {
    let (_p, result) = roomy_answer("digest-mismatch");
    assert_breaks_only(&result, &roomy_query(), Anchor::D1);
    let found = violations(&result, &roomy_query());
    assert_eq!(found.len(), 1, "{found:#?}");
    let path = &found[0].path;
    let index: usize = path["frames[".len()..path.find(']').unwrap()]
        .parse()
        .unwrap();
    let frame = &result.frames[index];
    assert!(is_sha256_digest(frame.content_digest.as_deref().unwrap()));
    // Without recomputing, the digest looks fine: only a hasher catches it.
    assert!(frame.validate().is_empty());
}

#[test]
fn f5_stale_digest_passes_validation_but_not_the_disk_reread() {
    let mut p = Provider::mode("stale-digest", &[]);
    p.handshake();
    let q = roomy_query();
    let result = frames_of(&p.query("q", &q), "q");
    assert!(
        violations(&result, &q).is_empty(),
        "{:#?}",
        violations(&result, &q)
    );
    let mismatches = disk_mismatches(&result);
    assert_eq!(mismatches.len(), 1, "{mismatches:#?}");
    assert!(mismatches[0].contains("digest"), "{mismatches:?}");
    let stale = result
        .frames
        .iter()
        .flat_map(|f| f.file_provenance())
        .filter_map(|p| p.digest.as_deref())
        .all(is_sha256_digest);
    assert!(stale, "the stale digest is still well-formed");
}
