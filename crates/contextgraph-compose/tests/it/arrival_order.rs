//! Items 2 and 5: the composition depends only on the set of frames, never
//! on arrival order, and the same set composes to identical bytes every time.

use crate::common::*;
use contextgraph_compose::{compose, Placement, ProviderOutcome};
use contextgraph_types::ContextFrame;
use proptest::prelude::*;

/// A frame drawn from small pools so that duplicates, overlapping regions,
/// label collisions and score ties all happen often.
fn pooled_frame() -> impl Strategy<Value = (usize, ContextFrame)> {
    (
        0usize..4,
        0usize..10,
        0usize..5,
        prop::option::of((0u32..4, 0u32..30, 1u32..20)),
        0u8..4,
        0usize..3,
    )
        .prop_map(|(provider, id, body, region, score, label)| {
            let content = text(&format!("body {body}"), 40 + 37 * body);
            let mut f = match region {
                Some((file, start, len)) => file_frame(
                    &format!("f{id}"),
                    &content,
                    &format!("file:///repo/{file}.rs"),
                    Some(&format!("L{}-{}", start + 1, start + len)),
                ),
                None => frame(&format!("f{id}"), &content),
            };
            f.score = f32::from(score) / 3.0;
            f.citation_label = Some(format!("shared label {label}"));
            (provider, f)
        })
}

fn outcomes_from(
    frames: &[(usize, ContextFrame)],
    provider_order: &[usize],
) -> Vec<ProviderOutcome> {
    provider_order
        .iter()
        .map(|&p| {
            ProviderOutcome::accepted(
                format!("provider-{p}"),
                frames
                    .iter()
                    .filter(|(q, _)| *q == p)
                    .map(|(_, f)| f.clone())
                    .collect(),
            )
        })
        .collect()
}

/// Frames tagged with the index of the provider that offers them.
type Offered = Vec<(usize, ContextFrame)>;

/// The frames, the same frames shuffled, a shuffled provider order, a budget
/// and whether to rank.
fn scenario() -> impl Strategy<Value = (Offered, Offered, Vec<usize>, u32, bool)> {
    prop::collection::vec(pooled_frame(), 0..30).prop_flat_map(|frames| {
        (
            Just(frames.clone()),
            Just(frames).prop_shuffle(),
            Just(vec![0usize, 1, 2, 3]).prop_shuffle(),
            200u32..4000,
            any::<bool>(),
        )
    })
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn arrival_order_never_changes_the_composition((frames, shuffled, order, tokens, ranked) in scenario()) {
        let placement = if ranked { Placement::Ranked } else { Placement::Stable };
        let options = budget(tokens).with_placement(placement);
        let first_outcomes = outcomes_from(&frames, &[0, 1, 2, 3]);
        let first = compose(&first_outcomes, &options);
        let second = compose(&outcomes_from(&shuffled, &order), &options);
        prop_assert_eq!(&first, &second);
        if let Ok(c) = &first {
            assert_sound(c, &first_outcomes);
            // Byte-identical JSON too (the serialised record is what gets stored).
            let a = serde_json::to_string(c).expect("serialises");
            let b = serde_json::to_string(second.as_ref().expect("composes")).expect("serialises");
            prop_assert_eq!(a, b);
        }
    }
}

#[test]
fn arrival_order_same_set_composes_to_identical_bytes_every_time() {
    let outcomes = vec![
        ProviderOutcome::accepted(
            "b",
            vec![frame("2", &text("two", 300)), frame("1", &text("one", 300))],
        ),
        ProviderOutcome::accepted("a", vec![frame("9", &text("nine", 300))]),
    ];
    let first = composed(&outcomes, &budget(400));
    for _ in 0..5 {
        assert_eq!(composed(&outcomes, &budget(400)).prompt, first.prompt);
    }
    let reversed: Vec<ProviderOutcome> = outcomes.iter().rev().cloned().collect();
    assert_eq!(composed(&reversed, &budget(400)), first);
}
