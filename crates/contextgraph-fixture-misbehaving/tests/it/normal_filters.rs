//! `normal`: the query's filters are honoured — kinds (Q1), `as_of`, anchors
//! (G4) — and the embedding space is enforced (E1).

use crate::common;

use common::{frames_of, roomy_query, violations, Provider};
use contextgraph_fixture_misbehaving::is_anchored;
use contextgraph_types::{FrameKind, Timestamp};
use serde_json::json;

#[test]
fn q1_only_requested_kinds_are_returned() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    for kind in ["snippet", "graph", "doc"] {
        let mut q = roomy_query();
        q["kinds"] = json!([kind]);
        let result = frames_of(&p.query(kind, &q), kind);
        assert!(!result.frames.is_empty(), "no {kind} frames");
        assert!(
            result.frames.iter().all(|f| f.kind.as_str() == kind),
            "{result:#?}"
        );
        assert!(violations(&result, &q).is_empty());
    }
    // A kind this provider does not serve gets zero frames, not others.
    let mut q = roomy_query();
    q["kinds"] = json!(["memory"]);
    let result = frames_of(&p.query("m", &q), "m");
    assert!(result.frames.is_empty(), "{result:#?}");
}

#[test]
fn as_of_nothing_recorded_after_the_pin_is_returned() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let all = frames_of(&p.query("all", &roomy_query()), "all");
    let pin = "2025-06-01T00:00:00Z";
    let mut q = roomy_query();
    q["as_of"] = json!(pin);
    let pinned = frames_of(&p.query("pinned", &q), "pinned");
    let pin = Timestamp::parse(pin).unwrap();
    let after = |f: &contextgraph_types::ContextFrame| {
        Timestamp::parse(f.recorded_at.as_deref().unwrap()).unwrap() > pin
    };
    assert!(
        all.frames.iter().any(after),
        "the pin must exclude something"
    );
    assert!(!pinned.frames.is_empty());
    assert!(!pinned.frames.iter().any(after), "{pinned:#?}");
    assert_eq!(
        pinned.frames.len(),
        all.frames.iter().filter(|f| !after(f)).count()
    );
    assert!(violations(&pinned, &q).is_empty());
}

#[test]
fn g4_anchored_frames_come_first() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let plain = frames_of(&p.query("plain", &roomy_query()), "plain");
    // Anchor the least relevant file-backed frame's file.
    let last = plain
        .frames
        .iter()
        .rev()
        .find(|f| f.kind != FrameKind::Graph)
        .expect("a file frame");
    let anchor = last.uri.clone().expect("file frames carry a uri");
    let mut q = roomy_query();
    q["anchors"] = json!([anchor]);
    let anchored = frames_of(&p.query("anchored", &q), "anchored");
    let anchors = vec![anchor.clone()];
    let flags: Vec<bool> = anchored
        .frames
        .iter()
        .map(|f| is_anchored(f, &anchors))
        .collect();
    assert!(flags[0], "an anchored frame comes first: {flags:?}");
    let first_unanchored = flags.iter().position(|a| !a).unwrap_or(flags.len());
    assert!(
        flags[first_unanchored..].iter().all(|a| !a),
        "anchored frames rank above every unanchored one: {flags:?}"
    );
    // Graph frames pointing at the file count as anchored (1 hop).
    let one_hop = anchored
        .frames
        .iter()
        .filter(|f| f.uri.as_deref() != Some(anchor.as_str()) && is_anchored(f, &anchors))
        .count();
    assert!(one_hop >= 1, "{anchored:#?}");
}

#[test]
fn e1_a_wrong_dimension_embedding_is_a_bad_request_and_the_right_one_is_used() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let mut q = roomy_query();
    q["embedding"] = json!([0.1, 0.2, 0.3]);
    let reply = p.query("bad", &q);
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "bad_request", "{reply}");
    assert_eq!(reply["id"], "bad");
    assert!(reply["message"].as_str().unwrap().contains("E1"), "{reply}");
    q["embedding"] = json!([1.0, 0.0, 0.0, 0.0]);
    let with = frames_of(&p.query("good", &q), "good");
    let without = frames_of(&p.query("none", &roomy_query()), "none");
    assert!(violations(&with, &q).is_empty());
    let scores = |r: &contextgraph_types::ContextQueryResult| {
        r.frames
            .iter()
            .map(|f| (f.id.clone(), f.score))
            .collect::<Vec<_>>()
    };
    assert_ne!(
        scores(&with),
        scores(&without),
        "the vector affects scoring"
    );
}
