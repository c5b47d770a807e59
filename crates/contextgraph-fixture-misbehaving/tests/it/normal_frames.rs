//! `normal`: every frame is valid (F1–F4, B3, D1, G1, G2), its file
//! provenance re-reads from disk (F5), and answers are deterministic.

use crate::common;

use std::collections::BTreeSet;

use common::{assert_honest, file_of, frames_of, roomy_answer, roomy_query, Provider};
use contextgraph_types::{FrameKind, Timestamp};

#[test]
fn f1_f5_b3_d1_every_frame_validates_and_its_provenance_rereads_from_disk() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let q = roomy_query();
    let reply = p.query("q1", &q);
    contextgraph_testkit::assert_schema_valid(&reply);
    let result = frames_of(&reply, "q1");
    assert!(result.frames.len() >= 8, "{result:#?}");
    assert_honest(&result, &q);
    let kinds: BTreeSet<_> = result.frames.iter().map(|f| f.kind.clone()).collect();
    for kind in [FrameKind::Doc, FrameKind::Snippet, FrameKind::Graph] {
        assert!(kinds.contains(&kind), "no {kind:?} frame");
    }
    for frame in &result.frames {
        assert!(frame.content_digest.is_some(), "{}: D1 digest", frame.id);
        assert!(frame
            .citation_label
            .as_deref()
            .is_some_and(|l| !l.is_empty()));
        if frame.kind == FrameKind::Graph {
            assert!(
                !frame.relations.is_empty(),
                "{}: graph frames carry edges",
                frame.id
            );
        } else {
            let p = frame.file_provenance().next().expect("file provenance");
            assert!(
                p.range.as_deref().is_some_and(|r| r.starts_with('L')),
                "{p:?}"
            );
        }
    }
    // Some frames older and some newer than mid-2025, so as_of can bite.
    let pivot = Timestamp::parse("2025-06-01T00:00:00Z").unwrap();
    let dates: Vec<Timestamp> = result
        .frames
        .iter()
        .map(|f| Timestamp::parse(f.recorded_at.as_deref().expect("recorded_at")).unwrap())
        .collect();
    assert!(dates.iter().any(|t| *t < pivot) && dates.iter().any(|t| *t > pivot));
}

#[test]
fn d2_the_same_query_twice_gets_the_same_ids_and_digests() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let first = frames_of(&p.query("a", &roomy_query()), "a");
    let second = frames_of(&p.query("b", &roomy_query()), "b");
    assert_eq!(first, second);
}

#[test]
fn d1_f5_a_changed_file_changes_the_digest_and_provenance_stays_honest() {
    let (mut p, before) = roomy_answer("normal");
    let frame = before
        .frames
        .iter()
        .find(|f| f.id == "docs/timeouts.md#L1-5")
        .expect("the timeouts doc");
    let path = file_of(frame);
    std::fs::write(
        &path,
        "# Timeouts\n\nNow 60 seconds.\nStill counts.\nSame limit.\n",
    )
    .unwrap();
    let after = frames_of(&p.query("b", &roomy_query()), "b");
    let changed = after.frames.iter().find(|f| f.id == frame.id).unwrap();
    assert_ne!(changed.content_digest, frame.content_digest);
    assert_honest(&after, &roomy_query());
}
