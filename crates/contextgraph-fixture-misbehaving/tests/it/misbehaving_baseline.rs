//! The baseline faults and the combined modes on the wire:
//! `placeholder-digest` (D1 throughout, verify honest about its own
//! digests), `range-past-end` (ranges past the end, digests over the lines
//! that exist), and each combination's second fault alongside.

use crate::common;

use common::{bytes_addressed, identity, roomy_answer, verdicts_of, violations};
use contextgraph_fixture_misbehaving::baseline::PLACEHOLDER_DIGEST;
use contextgraph_provider_sdk::{file_uri_to_path, read_range, sha256_digest};
use contextgraph_types::validate::Anchor;
use contextgraph_types::{ContextFrame, LineRange, Provenance};

const MUTATED: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

#[test]
fn d1_placeholder_digest_everywhere_and_verify_honest_about_it() {
    let (mut p, result) = roomy_answer("placeholder-digest");
    assert!(result
        .frames
        .iter()
        .all(|f| f.content_digest.as_deref() == Some(PLACEHOLDER_DIGEST)));
    let found = violations(&result, &common::roomy_query());
    assert!(
        !found.is_empty() && found.iter().all(|v| v.anchor == Anchor::D1),
        "{found:#?}"
    );
    let frame = &result.frames[0];
    let verdicts = verdicts_of(&p.verify(&[
        identity(&frame.id, Some(PLACEHOLDER_DIGEST)),
        identity(&frame.id, Some(MUTATED)),
    ]));
    assert_eq!(verdicts[0]["status"], "valid", "{verdicts:?}");
    assert_eq!(verdicts[1]["status"], "stale", "{verdicts:?}");
    assert_eq!(verdicts[1]["replacement_digest"], PLACEHOLDER_DIGEST);
}

#[test]
fn d1_v1_placeholder_digest_with_rubber_stamp_verify() {
    let (mut p, result) = roomy_answer("placeholder-digest+rubber-stamp-verify");
    assert_eq!(
        result.frames[0].content_digest.as_deref(),
        Some(PLACEHOLDER_DIGEST)
    );
    let verdicts = verdicts_of(&p.verify(&[identity(&result.frames[0].id, Some(MUTATED))]));
    assert_eq!(
        verdicts[0]["status"], "valid",
        "the rubber stamp: {verdicts:?}"
    );
}

#[test]
fn d1_v2_placeholder_digest_with_hollow_verify() {
    let (mut p, result) = roomy_answer("placeholder-digest+hollow-verify");
    assert_eq!(
        result.frames[0].content_digest.as_deref(),
        Some(PLACEHOLDER_DIGEST)
    );
    let verdicts =
        verdicts_of(&p.verify(&[identity(&result.frames[0].id, Some(PLACEHOLDER_DIGEST))]));
    assert!(verdicts.is_empty(), "{verdicts:?}");
}

/// The file entries whose range reaches past the end of their file, each
/// with the SHA-256 of the lines that do exist.
fn past_the_end(frame: &ContextFrame) -> Vec<(&Provenance, String)> {
    frame
        .file_provenance()
        .filter_map(|p| {
            let range = LineRange::parse(p.range.as_deref()?)?;
            let file = std::fs::read(file_uri_to_path(p.uri.as_deref()?).ok()?).ok()?;
            if read_range(&file, range).is_some() {
                return None;
            }
            let clipped = contextgraph_provider_sdk::count_lines(&file) as u32;
            let bytes = read_range(&file, LineRange::new(range.start, clipped)?)?;
            Some((p, sha256_digest(bytes)))
        })
        .collect()
}

#[test]
fn f5_range_past_end_claims_full_windows_hashing_the_lines_that_exist() {
    let (_p, result) = roomy_answer("range-past-end");
    let mut past = 0;
    for frame in &result.frames {
        for (p, clipped_digest) in past_the_end(frame) {
            past += 1;
            assert_eq!(
                p.digest.as_deref(),
                Some(clipped_digest.as_str()),
                "{}",
                frame.id
            );
        }
    }
    assert!(past > 0, "no range reaches past the end: {result:?}");
    // Everything else is as in normal mode: no rule broken.
    let found = violations(&result, &common::roomy_query());
    assert!(found.is_empty(), "{found:#?}");
    // Full windows are untouched and exact.
    let full = result
        .frames
        .iter()
        .flat_map(|f| f.file_provenance())
        .filter(|p| p.range.as_deref() == Some("L1-20"))
        .any(|p| bytes_addressed(p.uri.as_deref().unwrap(), "L1-20").is_some());
    assert!(full, "retry.rs's first window is a full, exact window");
}

#[test]
fn f5_range_past_end_with_a_stale_digest_on_a_range_past_the_end() {
    let (_p, result) = roomy_answer("range-past-end+stale-digest");
    let stale: Vec<&str> = result
        .frames
        .iter()
        .filter(|f| {
            past_the_end(f)
                .iter()
                .any(|(p, clipped)| p.digest.as_deref() != Some(clipped.as_str()))
        })
        .map(|f| f.id.as_str())
        .collect();
    assert_eq!(
        stale.len(),
        1,
        "exactly one frame's digest is stale, on a range past the end: {result:?}"
    );
}
