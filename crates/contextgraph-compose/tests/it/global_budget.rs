//! Item 1: one global budget, shares never above it, unused share not wasted.

use crate::common::*;
use contextgraph_compose::{
    plan_shares, water_fill, Budget, Claim, Exclusion, Options, Placement, ProviderOutcome,
};
use contextgraph_types::token_cost_of_len;
use proptest::prelude::*;

/// One provider with a single small frame, one with far more than half the budget.
fn little_and_much() -> Vec<ProviderOutcome> {
    let little = ProviderOutcome::accepted("little", vec![frame("l0", &text("little", 200))]);
    let much = ProviderOutcome::accepted(
        "much",
        (0..40)
            .map(|i| frame(&format!("m{i:02}"), &text(&format!("much {i}"), 800)))
            .collect(),
    );
    vec![little, much]
}

#[test]
fn global_budget_unused_share_flows_to_the_provider_that_can_use_it() {
    let outcomes = little_and_much();
    let options = budget(6000);
    let c = composed(&outcomes, &options);
    assert_sound(&c, &outcomes);
    let little = &c.audit.providers[0];
    let much = &c.audit.providers[1];
    assert_eq!(little.provider_id, "little");
    assert_eq!(
        little.frames_included, 1,
        "the small provider gets all it asked for"
    );

    // An equal split gives each provider half of what is left after the preamble.
    let half = (c.audit.budget.requested - c.audit.budget.preamble) / 2;
    assert!(
        little.used < half / 4,
        "the small provider needs far less than half"
    );
    assert!(much.share > half, "water-filling hands the unused share on");
    assert!(u64::from(little.share) + u64::from(much.share) <= u64::from(2 * half + 1));
    assert!(
        much.used > half,
        "the large provider used {} > its equal half {half}: the small one's unused share was redistributed",
        much.used
    );
    let equal_split_total = c.audit.budget.preamble + little.used + half;
    assert!(
        c.audit.budget.used > equal_split_total,
        "composition used {} of the budget, an equal split at most {equal_split_total}",
        c.audit.budget.used
    );
    // And nothing that could still fit was left out: what remains is less than any excluded block.
    let remaining_for_blocks = c.audit.budget.remaining;
    for f in &c.audit.frames {
        if let Some(Exclusion::OverBudget { charge, .. }) = f.exclusion() {
            assert!(*charge > remaining_for_blocks);
        }
    }
}

/// Fifty shards: each share (a fiftieth of the budget) is smaller than any
/// frame, so the leftover pass places everything. One shard declares score
/// 1.0 on forty frames; the others 0.5 on four. Round by round, every
/// shard's best frame is tried before the loud one's second; in plain score
/// order the loud one would fill the whole budget.
#[test]
fn global_budget_at_fifty_providers_the_highest_declared_scores_do_not_take_all() {
    let mut outcomes: Vec<ProviderOutcome> = (1..50)
        .map(|s| {
            ProviderOutcome::accepted(
                format!("shard-{s:02}"),
                (0..4)
                    .map(|i| {
                        scored(
                            &format!("f{i}"),
                            &text(&format!("shard {s} frame {i}"), 2000),
                            0.5,
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    outcomes.push(ProviderOutcome::accepted(
        "shard-00",
        (0..40)
            .map(|i| {
                scored(
                    &format!("loud{i:02}"),
                    &text(&format!("loud {i}"), 2000),
                    1.0,
                )
            })
            .collect(),
    ));
    let options = budget(20_000).with_placement(Placement::Ranked);
    let c = composed(&outcomes, &options);
    assert_sound(&c, &outcomes);
    let per_shard = (c.audit.budget.requested - c.audit.budget.preamble) / 50;
    let loud = c
        .audit
        .providers
        .iter()
        .find(|p| p.provider_id == "shard-00")
        .unwrap();
    let heard = c
        .audit
        .providers
        .iter()
        .filter(|p| p.frames_included > 0)
        .count();
    assert!(
        heard >= 30,
        "{heard} of 50 shards in the prompt (shares of {per_shard} tokens each)"
    );
    assert!(
        loud.frames_included <= 2,
        "the shard declaring the highest scores took {} frames",
        loud.frames_included
    );
}

#[test]
fn global_budget_covers_the_whole_prompt_fences_and_headers_included() {
    // Tiny contents under long, escaped labels and titles: the headers cost
    // far more than the content, and the budget must still hold.
    let long = "<&\"".repeat(60);
    let outcomes: Vec<ProviderOutcome> = ["p", "q"]
        .iter()
        .map(|p| {
            ProviderOutcome::accepted(
                *p,
                (0..40)
                    .map(|i| {
                        let mut f = frame(&format!("f{i:02}"), &format!("{p}{i}"));
                        f.citation_label = Some(format!("{long} {i}"));
                        f.title = format!("title {long}");
                        f
                    })
                    .collect(),
            )
        })
        .collect();
    let c = composed(&outcomes, &budget(2000));
    assert_sound(&c, &outcomes);
    assert!(c.citations.len() >= 2);
    assert!(token_cost_of_len(c.prompt.len()) <= 2000);
    // Content cost alone would have let far more frames in: headers are charged.
    let content_only: u64 = c.audit.budget.content;
    assert!(content_only * 20 < u64::from(c.audit.budget.used));
    assert!(
        c.citations.len() < 80,
        "not every frame fits once headers are paid for"
    );
}

#[test]
fn global_budget_in_model_tokens_uses_the_explicit_safety_factor() {
    let outcomes = little_and_much();
    let options = Options::new(Budget::model_tokens_with_factor(8000, 2.0));
    let c = composed(&outcomes, &options);
    assert_eq!(c.audit.budget.requested, 4000);
    assert_eq!(c.usage.budget_requested, 4000);
    assert_eq!(
        c.audit.budget.given,
        Budget::model_tokens_with_factor(8000, 2.0)
    );
    let default = composed(&outcomes, &Options::new(Budget::model_tokens(8000)));
    assert_eq!(default.audit.budget.requested, 5925, "floor(8000 / 1.35)");
    assert!(token_cost_of_len(default.prompt.len()) <= 5925);
}

#[test]
fn global_budget_charges_recomputed_cost_not_the_declared_one_b3() {
    let mut liar = frame("big", &text("big", 4000));
    liar.token_cost = 1;
    let outcomes = vec![ProviderOutcome::accepted("p", vec![liar])];
    let c = composed(&outcomes, &budget(600));
    assert!(c.citations.is_empty());
    assert_eq!(c.audit.frames[0].token_cost, 1000, "ceil(4000 / 4)");
    assert!(matches!(
        c.audit.frames[0].exclusion(),
        Some(Exclusion::OverBudget { charge, .. }) if *charge > 1000
    ));
}

#[test]
fn global_budget_weights_skew_the_split() {
    let outcomes: Vec<ProviderOutcome> = ["a", "b"]
        .iter()
        .map(|p| {
            ProviderOutcome::accepted(
                *p,
                (0..30)
                    .map(|i| frame(&format!("{p}{i:02}"), &text(&format!("{p}{i}"), 400)))
                    .collect(),
            )
        })
        .collect();
    let c = composed(&outcomes, &budget(4000).with_weight("b", 3));
    assert_eq!(c.audit.providers[1].weight, 3);
    assert_eq!(
        u64::from(c.audit.providers[0].share) + u64::from(c.audit.providers[1].share),
        u64::from(c.audit.budget.requested - c.audit.budget.preamble)
    );
    assert!(c.audit.providers[1].share >= 3 * c.audit.providers[0].share - 3);
    assert!(c.audit.providers[1].frames_included > 2 * c.audit.providers[0].frames_included);
    assert_eq!(plan_shares(1000, &[1, 3]), vec![250, 750]);
}

proptest! {
    #[test]
    fn global_budget_shares_never_sum_above_it_and_waste_nothing(
        total in 0u32..100_000,
        claims in prop::collection::vec((0u32..5, 0u64..50_000), 0..12),
    ) {
        let claims: Vec<Claim> = claims.into_iter().map(|(weight, demand)| Claim { weight, demand }).collect();
        let shares = water_fill(total, &claims);
        prop_assert_eq!(shares.len(), claims.len());
        let sum: u64 = shares.iter().map(|&s| u64::from(s)).sum();
        prop_assert!(sum <= u64::from(total));
        for (s, c) in shares.iter().zip(&claims) {
            prop_assert!(u64::from(*s) <= c.demand);
            if c.weight == 0 { prop_assert_eq!(*s, 0); }
        }
        let wanted: u64 = claims.iter().filter(|c| c.weight > 0).map(|c| c.demand).sum();
        prop_assert_eq!(sum, wanted.min(u64::from(total)), "no budget idle while someone wants it");
    }

    #[test]
    fn global_budget_planned_shares_sum_exactly_to_it(
        total in 0u32..1_000_000,
        weights in prop::collection::vec(1u32..10, 1..10),
    ) {
        let shares = plan_shares(total, &weights);
        prop_assert_eq!(shares.iter().map(|&s| u64::from(s)).sum::<u64>(), u64::from(total));
        let w: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        for (s, wi) in shares.iter().zip(&weights) {
            let exact = u64::from(total) * u64::from(*wi) / w;
            prop_assert!(u64::from(*s) == exact || u64::from(*s) == exact + 1);
        }
    }

    #[test]
    fn global_budget_is_never_exceeded_by_the_prompt(
        tokens in 0u32..3000,
        sizes in prop::collection::vec((0usize..3, 0usize..1500), 0..25),
    ) {
        let mut outcomes: Vec<ProviderOutcome> = (0..3).map(|p| ProviderOutcome::accepted(format!("p{p}"), vec![])).collect();
        for (i, (p, n)) in sizes.into_iter().enumerate() {
            if let contextgraph_compose::ProviderStatus::Accepted { frames } = &mut outcomes[p].status {
                frames.push(frame(&format!("f{i}"), &text(&format!("f{i}<&"), n)));
            }
        }
        let c = composed(&outcomes, &budget(tokens));
        assert_sound(&c, &outcomes);
        prop_assert!(token_cost_of_len(c.prompt.len()) <= tokens);
        let shares: u64 = c.audit.providers.iter().map(|p| u64::from(p.share)).sum();
        prop_assert!(shares <= u64::from(tokens));
    }
}
