//! Item 3: stable placement (canonical order, D2) and ranked placement (best at the edges).

use crate::common::*;
use contextgraph_compose::{parse_prompt, Placement, ProviderOutcome};

fn five_frames() -> Vec<ProviderOutcome> {
    vec![
        ProviderOutcome::accepted(
            "zeta",
            vec![
                scored("a", &text("zeta a", 200), 0.9),
                scored("b", &text("zeta b", 200), 0.1),
            ],
        ),
        ProviderOutcome::accepted(
            "alpha",
            vec![
                scored("y", &text("alpha y", 200), 0.5),
                scored("x", &text("alpha x", 200), 0.7),
                scored("z", &text("alpha z", 200), 0.3),
            ],
        ),
    ]
}

fn order(prompt: &str) -> Vec<String> {
    parse_prompt(prompt)
        .expect("parses")
        .into_iter()
        // Labels are `label <id>` (see `common::frame`).
        .map(|f| format!("{}/{}", f.provider, f.label.trim_start_matches("label ")))
        .collect()
}

#[test]
fn placement_stable_emits_canonical_frame_id_order_d2() {
    let outcomes = five_frames();
    let c = composed(&outcomes, &unlimited());
    assert_sound(&c, &outcomes);
    assert_eq!(
        order(&c.prompt),
        ["alpha/x", "alpha/y", "alpha/z", "zeta/a", "zeta/b"]
    );
}

#[test]
fn placement_stable_bytes_ignore_score_and_declared_token_cost_d2() {
    let outcomes = five_frames();
    // A tight budget, so that selection matters as well as order.
    let options = budget(400);
    let base = composed(&outcomes, &options);
    assert!(
        !base.citations.is_empty() && base.citations.len() < 5,
        "budget forces a choice"
    );
    let mut perturbed = outcomes.clone();
    for o in &mut perturbed {
        if let contextgraph_compose::ProviderStatus::Accepted { frames } = &mut o.status {
            for (i, f) in frames.iter_mut().enumerate() {
                f.score = 1.0 - f.score;
                f.token_cost = 7 * i as u32 + 1;
            }
        }
    }
    let again = composed(&perturbed, &options);
    assert_eq!(
        again.prompt, base.prompt,
        "score and token_cost never change the bytes"
    );
    assert_eq!(again.citations, base.citations);
}

#[test]
fn placement_ranked_puts_the_best_at_the_edges_and_the_weakest_in_the_middle() {
    let outcomes = five_frames();
    let c = composed(&outcomes, &unlimited().with_placement(Placement::Ranked));
    assert_sound(&c, &outcomes);
    // Scores: zeta/a .9, alpha/x .7, alpha/y .5, alpha/z .3, zeta/b .1
    assert_eq!(
        order(&c.prompt),
        ["zeta/a", "alpha/y", "zeta/b", "alpha/z", "alpha/x"]
    );
    assert_eq!(c.audit.placement, Placement::Ranked);
}

#[test]
fn placement_ranked_selects_by_score_within_a_providers_share() {
    // Scores are provider-normalised, so they rank frames within a provider;
    // across providers the budget split decides (each gets its fair share).
    let outcomes = vec![ProviderOutcome::accepted(
        "p",
        [0.2f32, 0.9, 0.4, 0.8, 0.1, 0.6]
            .iter()
            .enumerate()
            .map(|(i, &s)| scored(&format!("f{i}"), &text(&format!("f{i}"), 200), s))
            .collect(),
    )];
    // The preamble, then room for three blocks of ~70 budget tokens (200
    // bytes of content and a short header) but not four.
    let room = contextgraph_types::token_cost_of_len(contextgraph_compose::PREAMBLE.len()) + 230;
    let c = composed(&outcomes, &budget(room).with_placement(Placement::Ranked));
    let mut chosen = order(&c.prompt);
    chosen.sort();
    assert_eq!(chosen, ["p/f1", "p/f3", "p/f5"], "the three best fit");
    let stable = composed(&outcomes, &budget(room));
    assert_eq!(
        order(&stable.prompt),
        ["p/f0", "p/f1", "p/f2"],
        "stable mode ignores score"
    );
}

#[test]
fn placement_ranked_treats_nan_and_out_of_range_scores_as_bounded() {
    let outcomes = vec![ProviderOutcome::accepted(
        "p",
        vec![
            scored("nan", &text("nan", 100), f32::NAN),
            scored("huge", &text("huge", 100), 7.0),
            scored("mid", &text("mid", 100), 0.5),
        ],
    )];
    let c = composed(&outcomes, &unlimited().with_placement(Placement::Ranked));
    assert_sound(&c, &outcomes);
    assert_eq!(order(&c.prompt), ["p/huge", "p/nan", "p/mid"]);
}
