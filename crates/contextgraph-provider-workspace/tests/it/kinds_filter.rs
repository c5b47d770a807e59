//! Q1: with a non-empty `kinds`, no frame of another kind is returned; a
//! query for kinds the provider does not serve gets zero frames.

use crate::common::{ask, q, Fixture};
use contextgraph_types::FrameKind;

#[test]
fn q1_only_requested_kinds_are_returned() {
    let f = Fixture::new();
    let p = f.open();
    for kind in [FrameKind::Symbol, FrameKind::Doc, FrameKind::Snippet] {
        let mut query = q("retry_loop inventory listen_port networking");
        query.kinds = vec![kind.clone()];
        let r = ask(&p, &query);
        assert!(!r.frames.is_empty(), "{kind} frames exist for this query");
        assert!(
            r.frames.iter().all(|fr| fr.kind == kind),
            "{kind}: {:?}",
            crate::common::ids(&r)
        );
    }
}

#[test]
fn q1_unserved_kinds_get_zero_frames() {
    let f = Fixture::new();
    let p = f.open();
    let mut query = q("retry_loop");
    query.kinds = vec![FrameKind::Memory, FrameKind::Episode];
    let r = ask(&p, &query);
    assert!(r.frames.is_empty());
    assert!(!r.truncated);
}
