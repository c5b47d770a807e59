//! Budget misbehaviours: `frame-flood` breaks B4 and `budget-overrun` B1,
//! each with every other rule (B3 included) intact.

use crate::common;

use common::{assert_breaks_only, frames_of, query, Provider};
use contextgraph_types::validate::Anchor;

#[test]
fn b4_frame_flood_returns_max_frames_plus_50() {
    let mut p = Provider::mode("frame-flood", &[]);
    p.handshake();
    let q = query("retry policy", 5, 2000);
    let result = frames_of(&p.query("q", &q), "q");
    assert_eq!(result.frames.len(), 55);
    assert_breaks_only(&result, &q, Anchor::B4);
}

#[test]
fn b1_budget_overrun_exceeds_max_tokens_with_honest_costs() {
    let mut p = Provider::mode("budget-overrun", &[]);
    p.handshake();
    for (id, q) in [
        ("tight", query("retry policy", 3, 200)),
        ("roomy", query("retry", 50, 100_000)),
    ] {
        let result = frames_of(&p.query(id, &q), id);
        let max_tokens = q["max_tokens"].as_u64().unwrap();
        assert!(
            result.total_token_cost() > max_tokens,
            "{id}: {}",
            result.total_token_cost()
        );
        assert!(result.frames.iter().all(|f| f.has_honest_token_cost()));
        assert_breaks_only(&result, &q, Anchor::B1);
    }
}
