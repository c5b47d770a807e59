//! Item 3: reference frames (P3) the host cannot rehydrate contribute nothing
//! and are reported; rehydrated bytes must match `canonical_content_hash`.

use crate::common::*;
use contextgraph_compose::{compose_with, sha256_digest, Exclusion, ProviderOutcome, Rehydrate};
use contextgraph_types::{ContentRef, ContextFrame, FrameKind, Representation};

const SOURCE: &str = "The full runbook: roll back with `deploy revert <sha>`.";

fn reference(id: &str) -> ContextFrame {
    let mut f = ContextFrame::new(id, FrameKind::Doc, "Runbook", "");
    f.content = None;
    f.token_cost = 0;
    f.representation = Representation::Reference;
    f.canonical_content_hash = Some(sha256_digest(SOURCE.as_bytes()));
    f.content_ref = Some(ContentRef {
        provider_id: "docs".into(),
        uri: "ref://runbook".into(),
        expires_at: None,
    });
    f.citation_label = Some("runbook".into());
    f
}

struct Store(&'static str);

impl Rehydrate for Store {
    fn rehydrate(&self, provider_id: &str, frame: &ContextFrame) -> Option<String> {
        (provider_id == "docs" && frame.content_ref.as_ref()?.uri == "ref://runbook")
            .then(|| self.0.to_owned())
    }
}

#[test]
fn reference_frames_without_rehydration_contribute_nothing_and_are_reported() {
    let outcomes = vec![ProviderOutcome::accepted(
        "docs",
        vec![reference("r"), frame("f", "inline")],
    )];
    let c = composed(&outcomes, &unlimited());
    assert_sound(&c, &outcomes);
    assert_eq!(c.citations.len(), 1);
    let entry = c
        .audit
        .frames
        .iter()
        .find(|f| f.frame.frame_id == "r")
        .expect("audited");
    assert!(matches!(
        entry.exclusion(),
        Some(Exclusion::UnresolvableReference { .. })
    ));
    assert_eq!(entry.token_cost, 0);
    assert!(entry.explain().contains("P3"));
}

#[test]
fn reference_frames_rehydrated_and_verified_are_rendered() {
    let outcomes = vec![ProviderOutcome::accepted("docs", vec![reference("r")])];
    let c = compose_with(&outcomes, &unlimited(), &Store(SOURCE)).expect("composes");
    assert_eq!(c.citations.len(), 1);
    let parsed = contextgraph_compose::parse_prompt(&c.prompt).expect("parses");
    assert_eq!(parsed[0].content, SOURCE);
    assert_eq!(
        c.usage.budget_consumed,
        u64::from(contextgraph_types::token_cost_of_len(SOURCE.len()))
    );
}

#[test]
fn reference_frames_rehydrated_with_the_wrong_bytes_are_refused() {
    let outcomes = vec![ProviderOutcome::accepted("docs", vec![reference("r")])];
    let c = compose_with(&outcomes, &unlimited(), &Store("tampered runbook")).expect("composes");
    assert!(c.citations.is_empty());
    assert!(matches!(
        c.audit.frames[0].exclusion(),
        Some(Exclusion::UnresolvableReference { detail }) if detail.contains("canonical_content_hash")
    ));
}
