//! G3/G4: given anchors, the provider returns an anchored frame when it has
//! one and ranks every anchored frame above every unanchored one; graph
//! neighbours of an anchor rank above unrelated frames.

use crate::common::{ask, q, Fixture};
use contextgraph_types::ContextFrame;

fn is_anchored(frame: &ContextFrame, anchors: &[String]) -> bool {
    frame.uri.as_ref().is_some_and(|u| anchors.contains(u))
        || frame
            .relations
            .iter()
            .any(|r| anchors.contains(&r.target_uri))
}

#[test]
fn g4_file_anchor_ranks_anchored_frames_first() {
    let f = Fixture::new();
    let p = f.open();
    // "Inventory" matches Python code and the README strongly; the anchor is a JS file.
    let mut query = q("inventory stock item");
    query.anchors = vec![f.file_uri("web/cart.js")];
    let r = ask(&p, &query);
    assert!(
        r.frames.iter().any(|fr| is_anchored(fr, &query.anchors)),
        "no anchored frame returned"
    );
    let first_unanchored = r
        .frames
        .iter()
        .position(|fr| !is_anchored(fr, &query.anchors));
    let last_anchored = r
        .frames
        .iter()
        .rposition(|fr| is_anchored(fr, &query.anchors));
    if let (Some(u), Some(a)) = (first_unanchored, last_anchored) {
        assert!(
            a < u,
            "an anchored frame ranked below an unanchored one: {:?}",
            crate::common::ids(&r)
        );
    }
    assert!(
        r.frames
            .iter()
            .any(|fr| fr.id.starts_with("app/inventory.py")),
        "lexical matches still follow"
    );
}

#[test]
fn g4_symbol_anchor_finds_the_definition_and_its_callers_at_one_hop() {
    let f = Fixture::new();
    let p = f.open();
    let anchor = format!("{}#net::retry_loop", f.file_uri("src/net.rs"));
    let mut query = q("settings timeout");
    query.anchors = vec![anchor.clone()];
    let r = ask(&p, &query);
    let anchored: Vec<&str> = r
        .frames
        .iter()
        .filter(|fr| is_anchored(fr, &query.anchors))
        .map(|fr| fr.id.as_str())
        .collect();
    assert!(
        anchored.contains(&"src/net.rs#net::retry_loop"),
        "{anchored:?}"
    );
    assert!(
        anchored.contains(&"src/lib.rs#start"),
        "the caller carries code.calls to the anchor: {anchored:?}"
    );
    assert!(is_anchored(&r.frames[0], &query.anchors));
}

#[test]
fn g3_graph_neighbours_of_an_anchor_outrank_unrelated_frames() {
    let f = Fixture::new();
    let p = f.open();
    // No lexical signal at all: the query names nothing in the workspace.
    let mut query = q("xyzzy");
    query.anchors = vec![format!("{}#net::retry_loop", f.file_uri("src/net.rs"))];
    let r = ask(&p, &query);
    let ids = crate::common::ids(&r);
    // connect_once is called by retry_loop (2 hops from the symbol anchor via the definition).
    assert!(ids.contains(&"src/net.rs#net::connect_once"), "{ids:?}");
    assert!(
        !ids.iter()
            .any(|i| i.starts_with("java/") || i.starts_with("go/")),
        "unrelated frames: {ids:?}"
    );
}

#[test]
fn scores_are_normalised_into_the_unit_interval() {
    let f = Fixture::new();
    let p = f.open();
    let r = ask(&p, &q("retry connection refused"));
    assert!(!r.frames.is_empty());
    assert!(r.frames.iter().all(|fr| (0.0..=1.0).contains(&fr.score)));
    assert!(r.frames.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(
        r.frames[0].id,
        "src/net.rs#net::retry_loop",
        "{:?}",
        crate::common::ids(&r)
    );
}
