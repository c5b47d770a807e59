//! Budget packing (B1, B3, B4) with honest `truncated`/`dropped_estimate`,
//! and `compact` rendering of long items (P2, P4) that resolves to the source.

use crate::common::{ask, q, Fixture};
use contextgraph_provider_sdk::sha256_digest;
use contextgraph_types::{ContextQuery, Representation};

#[test]
fn b1_b4_budget_and_frame_limit_are_honoured_and_truncation_reported() {
    let f = Fixture::new();
    let p = f.open();
    let wide = ask(
        &p,
        &ContextQuery::new("fn pub return item invoice", 100, 100_000),
    );
    assert!(wide.frames.len() >= 4, "{:?}", crate::common::ids(&wide));
    assert!(!wide.truncated);
    let narrow = ask(
        &p,
        &ContextQuery::new("fn pub return item invoice", 2, 100_000),
    );
    assert_eq!(narrow.frames.len(), 2);
    assert!(narrow.truncated);
    assert_eq!(
        narrow.dropped_estimate,
        Some((wide.frames.len() - 2) as u32)
    );
    let tight = ask(
        &p,
        &ContextQuery::new("fn pub return item invoice", 100, 40),
    );
    assert!(tight.total_token_cost() <= 40);
    assert!(tight.truncated && tight.dropped_estimate.unwrap_or(0) > 0);
    let none = ask(&p, &ContextQuery::new("fn pub return item invoice", 100, 0));
    assert!(none.frames.is_empty() && none.truncated);
}

fn long_module() -> String {
    let mut s = String::from("/// A long state machine.\npub fn long_state_machine(x: u32) -> u32 {\n    let mut acc = 0;\n");
    for i in 0..80 {
        s.push_str(&format!("    acc += x * {i}; // step {i}\n"));
    }
    s.push_str("    acc\n}\n");
    s
}

#[test]
fn compact_renders_long_items_as_outlines_that_resolve_to_the_source() {
    let f = Fixture::new();
    f.write("src/long.rs", &long_module());
    let p = f.open();
    let mut query = q("long_state_machine");
    query.representation_preferences = vec![Representation::Compact, Representation::Full];
    let r = ask(&p, &query);
    let fr = crate::common::find(&r, "src/long.rs#long::long_state_machine").expect("long frame");
    assert_eq!(fr.representation, Representation::Compact);
    let content = fr.content.as_deref().expect("outline");
    assert!(
        content.contains("pub fn long_state_machine") && content.contains("lines elided"),
        "{content}"
    );
    let source = long_module();
    assert_eq!(
        fr.canonical_content_hash.as_deref(),
        Some(sha256_digest(source.as_bytes()).as_str())
    );
    assert_eq!(
        fr.canonical_token_cost,
        Some(source.len().div_ceil(4) as u32)
    );
    assert!(
        fr.token_cost < fr.canonical_token_cost.unwrap_or(0),
        "P4: inline cost is the outline's"
    );
    let resolved = p
        .resolve(fr.content_ref.as_ref().expect("content_ref"))
        .expect("resolve");
    assert_eq!(resolved, source);
    // Short items stay full even when compact is preferred.
    let mut short_query = q("parse_timeout");
    short_query.representation_preferences = vec![Representation::Compact, Representation::Full];
    let short = crate::common::find(
        &ask(&p, &short_query),
        "src/config.rs#config::parse_timeout",
    )
    .map(|x| x.representation);
    assert_eq!(short, Some(Representation::Full));
    let full_only = ask(&p, &q("long_state_machine"));
    let ff = crate::common::find(&full_only, "src/long.rs#long::long_state_machine").expect("full");
    assert_eq!(ff.representation, Representation::Full);
    assert_eq!(ff.content.as_deref(), Some(source.as_str()));
    // Editing the source makes the reference stale rather than serving other bytes.
    f.write(
        "src/long.rs",
        &long_module().replace("step 3", "step three"),
    );
    assert!(p
        .resolve(fr.content_ref.as_ref().expect("content_ref"))
        .is_err());
}

/// Only the frames a budget keeps are read and built (the others are
/// packed from the index's record of them): the answer must be exactly
/// what packing every candidate, fully built, under that budget gives.
#[test]
fn packing_from_the_index_keeps_what_packing_every_built_frame_keeps() {
    let f = Fixture::new();
    let p = f.open();
    let goal = "fn pub return item invoice retry parse timeout";
    // Every candidate, built and kept (want = 400 covers them all).
    let all = ask(&p, &ContextQuery::new(goal, 100, 1_000_000));
    assert!(all.frames.len() >= 4, "{:?}", crate::common::ids(&all));
    for (max_frames, budget) in [
        (100, 0),
        (100, 30),
        (100, 120),
        (3, 100_000),
        (100, 400),
        (2, 90),
    ] {
        let query = ContextQuery::new(goal, max_frames, budget);
        let got = ask(&p, &query);
        let want = contextgraph_provider_sdk::pack(all.frames.clone(), &query);
        assert_eq!(
            got.frames, want.frames,
            "{max_frames} frames, {budget} tokens"
        );
        assert_eq!(
            (got.truncated, got.dropped_estimate),
            (want.truncated, want.dropped_estimate),
            "{max_frames} frames, {budget} tokens"
        );
    }
}

/// A file edited after the last refresh: the frame planned from the index
/// no longer matches the file, so the answer falls back to building every
/// candidate, and still never serves the stale chunk.
#[test]
fn a_kept_frame_whose_file_changed_since_the_refresh_is_not_served() {
    let f = Fixture::new();
    let p = f.open();
    let goal = "fn pub return item invoice retry parse timeout";
    let before = ask(&p, &ContextQuery::new(goal, 100, 1_000_000));
    let first = before.frames.first().expect("a frame").clone();
    let rel = first.id.split('#').next().expect("a path").to_owned();
    let text = std::fs::read_to_string(f.path(&rel)).expect("read");
    f.write(&rel, &format!("// edited after the refresh\n{text}"));
    let after = ask(&p, &ContextQuery::new(goal, 100, 1_000_000));
    assert!(
        after
            .frames
            .iter()
            .all(|fr| !fr.id.starts_with(&format!("{rel}#"))),
        "a chunk of the edited {rel} was served: {:?}",
        crate::common::ids(&after)
    );
    let others: Vec<_> = before
        .frames
        .iter()
        .filter(|fr| !fr.id.starts_with(&format!("{rel}#")))
        .collect();
    assert_eq!(after.frames.iter().collect::<Vec<_>>(), others);
}
