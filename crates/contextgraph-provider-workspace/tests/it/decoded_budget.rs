//! An answer's decoded chunk records are kept for the next answers up to
//! a budget, and forgotten past it: the goals a peer sends cannot grow the
//! server's memory beyond the budget, and the answers do not change.

use crate::common::{ask, ids, q, Fixture};
use contextgraph_types::ContextQueryResult;

fn owned(result: &ContextQueryResult) -> Vec<String> {
    ids(result).into_iter().map(str::to_owned).collect()
}

#[test]
fn records_decoded_past_the_budget_are_forgotten_after_the_answer() {
    let f = Fixture::new();
    let goals = ["retry_loop backoff", "parse_timeout config", "listen_port"];
    let decoded = |p: &contextgraph_provider_workspace::WorkspaceProvider| {
        p.workspace().view().index().decoded_records()
    };

    // The default budget keeps what a small tree's answers decode.
    let kept = f.open();
    let mut answers = Vec::new();
    for goal in goals {
        answers.push(owned(&ask(&kept, &q(goal))));
    }
    let held = decoded(&kept);
    assert!(held > 0, "answers decode records and keep them");

    // A budget below that: after each answer nothing over it is left.
    let bounded = f.open().with_decoded_records_budget(1);
    for (goal, expected) in goals.iter().zip(&answers) {
        assert_eq!(&owned(&ask(&bounded, &q(goal))), expected, "{goal}");
        assert!(decoded(&bounded) <= 1, "{goal}: {}", decoded(&bounded));
    }
}
