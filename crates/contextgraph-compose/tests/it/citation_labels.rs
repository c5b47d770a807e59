//! Item 5: citation labels are unique in the prompt, deterministic, and
//! cannot be taken from another provider by copying.

use crate::common::*;
use contextgraph_compose::{parse_prompt, ProviderOutcome};

/// A frame with `label`; its content is unique per (`provider`, `id`) so nothing dedups.
fn labelled(provider: &str, id: &str, label: &str) -> contextgraph_types::ContextFrame {
    let mut f = frame(id, &text(&format!("{provider}/{id}"), 120));
    f.citation_label = Some(label.to_owned());
    f
}

#[test]
fn citation_labels_collisions_are_disambiguated_deterministically() {
    let outcomes = vec![
        ProviderOutcome::accepted(
            "docs",
            vec![
                labelled("docs", "a", "README"),
                labelled("docs", "b", "README"),
                labelled("docs", "c", "Guide"),
            ],
        ),
        ProviderOutcome::accepted("web", vec![labelled("web", "a", "README")]),
    ];
    let c = composed(&outcomes, &unlimited());
    assert_sound(&c, &outcomes);
    let labels: Vec<&str> = c.citations.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "README (docs/a)",
            "README (docs/b)",
            "Guide",
            "README (web/a)"
        ]
    );
    let parsed: Vec<String> = parse_prompt(&c.prompt)
        .expect("parses")
        .into_iter()
        .map(|f| f.label)
        .collect();
    assert_eq!(parsed, labels, "the map's labels are the prompt's labels");
}

#[test]
fn citation_labels_a_copied_label_is_not_handed_to_the_copier() {
    let honest =
        ProviderOutcome::accepted("honest", vec![labelled("honest", "h", "Security policy")]);
    let alone = composed(std::slice::from_ref(&honest), &unlimited());
    assert_eq!(alone.citations[0].label, "Security policy");
    // A provider whose frame sorts first copies the label.
    let copier = ProviderOutcome::accepted("aaa", vec![labelled("aaa", "x", "Security policy")]);
    let c = composed(&[copier, honest], &unlimited());
    assert!(
        c.citations.iter().all(|c| c.label != "Security policy"),
        "nobody gets the contested label"
    );
    let copier_label = &c
        .citations
        .iter()
        .find(|c| c.frame.provider_id == "aaa")
        .expect("cited")
        .label;
    assert!(copier_label.contains("aaa/x"), "{copier_label}");
}

#[test]
fn citation_labels_pre_claimed_qualified_forms_still_end_unique() {
    let outcomes = vec![ProviderOutcome::accepted(
        "p",
        vec![
            labelled("p", "1", "L"),
            labelled("p", "2", "L"),
            labelled("p", "3", "L (p/1)"),
            labelled("p", "4", "L (p/1) #2"),
        ],
    )];
    let c = composed(&outcomes, &unlimited());
    assert_sound(&c, &outcomes);
    let labels: Vec<&str> = c.citations.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["L (p/1) #3", "L (p/2)", "L (p/1)", "L (p/1) #2"]);
}

#[test]
fn citation_labels_fall_back_to_the_title_when_missing_f3() {
    let mut f = frame("x", "content");
    f.citation_label = None;
    f.title = "Readable title".into();
    let c = composed(&[ProviderOutcome::accepted("p", vec![f])], &unlimited());
    assert_eq!(c.citations[0].label, "Readable title");
}
