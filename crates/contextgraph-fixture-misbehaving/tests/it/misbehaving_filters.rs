//! Filter misbehaviours: `ignored-kinds` (Q1), `ignored-as-of`,
//! `ignored-anchors` (G4), `accept-wrong-dimension` (E1), and `unknown-kind`
//! (U2) — each observed on the wire with everything else intact.

use crate::common;

use common::{assert_breaks_only, frames_of, roomy_query, violations, Provider};
use contextgraph_fixture_misbehaving::is_anchored;
use contextgraph_types::validate::Anchor;
use contextgraph_types::FrameKind;
use serde_json::json;

#[test]
fn q1_ignored_kinds_returns_a_kind_that_was_not_requested() {
    let mut p = Provider::mode("ignored-kinds", &[]);
    p.handshake();
    for kinds in [json!(["snippet"]), json!(["doc", "snippet", "graph"])] {
        let mut q = roomy_query();
        q["kinds"] = kinds.clone();
        let result = frames_of(&p.query("q", &q), "q");
        assert!(
            result
                .frames
                .iter()
                .any(|f| !kinds.as_array().unwrap().contains(&json!(f.kind.as_str()))),
            "{kinds}: {result:#?}"
        );
        assert_breaks_only(&result, &q, Anchor::Q1);
    }
}

#[test]
fn as_of_ignored_as_of_returns_a_frame_recorded_after_the_pin() {
    let mut p = Provider::mode("ignored-as-of", &[]);
    p.handshake();
    for pin in ["2025-06-01T00:00:00Z", "2030-01-01T00:00:00Z"] {
        let mut q = roomy_query();
        q["as_of"] = json!(pin);
        let result = frames_of(&p.query("q", &q), "q");
        assert_breaks_only(&result, &q, Anchor::AsOf);
    }
}

#[test]
fn g4_ignored_anchors_ranks_anchored_frames_below_unanchored_ones() {
    let mut p = Provider::mode("ignored-anchors", &[]);
    p.handshake();
    let plain = frames_of(&p.query("plain", &roomy_query()), "plain");
    let anchor = plain
        .frames
        .iter()
        .find(|f| f.kind == FrameKind::Snippet)
        .and_then(|f| f.uri.clone())
        .unwrap();
    let mut q = roomy_query();
    q["anchors"] = json!([anchor]);
    let result = frames_of(&p.query("anchored", &q), "anchored");
    assert!(
        violations(&result, &q).is_empty(),
        "G4 is not a per-frame rule"
    );
    let anchors = vec![anchor];
    let flags: Vec<bool> = result
        .frames
        .iter()
        .map(|f| is_anchored(f, &anchors))
        .collect();
    let first_anchored = flags.iter().position(|a| *a);
    match first_anchored {
        None => {} // omitted entirely: also a G4 failure
        Some(i) => assert!(
            flags[..i].iter().any(|a| !a),
            "an unanchored frame must outrank the anchored ones: {flags:?}"
        ),
    }
    assert!(!flags[0], "{flags:?}");
}

#[test]
fn e1_accept_wrong_dimension_answers_a_3d_vector_with_frames() {
    let mut p = Provider::mode("accept-wrong-dimension", &[]);
    p.handshake();
    let mut q = roomy_query();
    q["embedding"] = json!([0.1, 0.2, 0.3]);
    let result = frames_of(&p.query("q", &q), "q");
    assert!(!result.frames.is_empty());
}

#[test]
fn u2_unknown_kind_adds_one_hologram_frame_among_good_ones() {
    let mut p = Provider::mode("unknown-kind", &[]);
    p.handshake();
    let q = roomy_query();
    let reply = p.query("q", &q);
    let result = frames_of(&reply, "q");
    let holograms: Vec<_> = result
        .frames
        .iter()
        .filter(|f| f.kind == FrameKind::Other("hologram".into()))
        .collect();
    assert_eq!(holograms.len(), 1, "{result:#?}");
    assert!(result.frames.len() > 1, "among good ones");
    assert!(
        violations(&result, &q).is_empty(),
        "{:#?}",
        violations(&result, &q)
    );
    assert!(
        !contextgraph_testkit::schema_errors(&reply).is_empty(),
        "the schema's closed kind enum rejects it"
    );
    // With a kinds filter it would break Q1 too, so it stays out.
    let mut q = roomy_query();
    q["kinds"] = json!(["doc"]);
    let result = frames_of(&p.query("k", &q), "k");
    assert!(result.frames.iter().all(|f| f.kind == FrameKind::Doc));
}
