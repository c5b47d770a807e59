//! `normal`: budget packing is greedy by score (B1, B4) and says honestly
//! what it left out (`truncated`, `dropped_estimate`); costs are exact (B3).

use crate::common;

use common::{frames_of, query, roomy_query, violations, Provider};

#[test]
fn b1_b4_packing_is_greedy_by_score_and_reports_what_it_dropped() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let all = frames_of(&p.query("all", &roomy_query()), "all");
    assert!(!all.truncated && all.dropped_estimate.is_none(), "{all:#?}");
    let (max_frames, max_tokens) = (4u32, 300u32);
    let q = query("retry policy max_attempts backoff", max_frames, max_tokens);
    let packed = frames_of(&p.query("tight", &q), "tight");
    assert!(
        violations(&packed, &q).is_empty(),
        "{:#?}",
        violations(&packed, &q)
    );
    // Replay the greedy walk over the full ranking.
    let mut expected = Vec::new();
    let mut left = u64::from(max_tokens);
    for f in &all.frames {
        if expected.len() < max_frames as usize && u64::from(f.token_cost) <= left {
            left -= u64::from(f.token_cost);
            expected.push(f.id.clone());
        }
    }
    let got: Vec<_> = packed.frames.iter().map(|f| f.id.clone()).collect();
    assert_eq!(got, expected);
    let dropped = (all.frames.len() - got.len()) as u32;
    assert!(dropped > 0);
    assert!(packed.truncated);
    assert_eq!(packed.dropped_estimate, Some(dropped));
}

#[test]
fn b1_a_budget_too_small_for_any_frame_gets_an_empty_truncated_answer() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let q = query("retry", 5, 1);
    let result = frames_of(&p.query("q", &q), "q");
    assert!(result.frames.is_empty());
    assert!(result.truncated);
    assert!(violations(&result, &q).is_empty());
}
