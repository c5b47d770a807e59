//! B1, B3, B4 in process: answers fit `max_tokens` and `max_frames`, costs
//! are computed from content, and `truncated`/`dropped_estimate` tell the
//! truth about what was left out.

use crate::common::{assert_honest_answer, docs_fixture, query};
use contextgraph_provider_docs::{DocsConfig, DocsProvider};
use contextgraph_provider_sdk::Provider;
use contextgraph_types::{ContextQuery, ContextQueryResult};
use serde_json::Value;

fn ask(provider: &DocsProvider, q: &Value) -> ContextQueryResult {
    let typed: ContextQuery = serde_json::from_value(q.clone()).unwrap();
    let result = provider.query(&typed).expect("query answered");
    assert_honest_answer(&result, q);
    result
}

const BROAD: &str =
    "retry policy backoff timeouts connection limits logging getting started configuration project";

#[test]
fn b4_max_frames_caps_the_answer_and_marks_it_truncated() {
    let dir = docs_fixture();
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    let all = ask(&provider, &query(BROAD, 100, 100_000));
    assert!(!all.truncated && all.dropped_estimate.is_none(), "{all:?}");
    let n = all.frames.len() as u32;
    let two = ask(&provider, &query(BROAD, 2, 100_000));
    assert_eq!(two.frames.len(), 2);
    assert!(two.truncated);
    assert_eq!(two.dropped_estimate, Some(n - 2));
    // The two kept are the two best of the full answer.
    assert_eq!(two.frames[0].id, all.frames[0].id);
    assert_eq!(two.frames[1].id, all.frames[1].id);
}

#[test]
fn b1_a_tight_token_budget_is_never_exceeded_and_smaller_frames_still_fit() {
    let dir = docs_fixture();
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    let all = ask(&provider, &query(BROAD, 100, 100_000));
    let smallest = all.frames.iter().map(|f| f.token_cost).min().unwrap();
    let largest = all.frames.iter().map(|f| f.token_cost).max().unwrap();
    assert!(smallest < largest);
    let budget = largest - 1;
    let tight = ask(&provider, &query(BROAD, 100, budget));
    assert!(tight.total_token_cost() <= u64::from(budget));
    assert!(
        !tight.frames.is_empty(),
        "frames smaller than the budget still fit"
    );
    assert!(tight.truncated);
    let dropped = tight.dropped_estimate.unwrap() as usize;
    assert_eq!(
        dropped + tight.frames.len(),
        all.frames.len(),
        "every candidate is either served or counted"
    );
}

#[test]
fn b1_a_budget_smaller_than_any_section_returns_nothing_but_says_so() {
    let dir = docs_fixture();
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    let none = ask(&provider, &query("retry policy", 10, 1));
    assert!(none.frames.is_empty());
    assert!(none.truncated);
    assert!(none.dropped_estimate.unwrap() > 0);
    let zero_frames = ask(&provider, &query("retry policy", 0, 100_000));
    assert!(zero_frames.frames.is_empty() && zero_frames.truncated);
}

#[test]
fn a_query_matching_nothing_is_an_empty_untruncated_answer() {
    let dir = docs_fixture();
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    let none = ask(&provider, &query("kubernetes helm chart", 10, 100_000));
    assert!(none.frames.is_empty());
    assert!(!none.truncated);
}
