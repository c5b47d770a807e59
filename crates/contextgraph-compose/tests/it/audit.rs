//! Item 5: every offered frame and every provider is in the audit with its
//! reason, and the usage report follows UR1.

use crate::common::*;
use contextgraph_compose::{
    Exclusion, FrameStatus, OutcomeAudit, ProviderOutcome, ProviderStatus, Sha256Hasher,
};
use contextgraph_types::{
    Anchor, ContentHasher, ContextFrame, ContextQuery, ContextQueryResult, ErrorCode, FrameKind,
    Representation, Violation,
};

fn everything_that_can_go_wrong() -> Vec<ProviderOutcome> {
    let mut unknown = frame("odd", "an image, perhaps");
    unknown.kind = FrameKind::Other("image".into());
    let mut no_content = frame("empty", "x");
    no_content.content = None;
    no_content.content_digest = None;
    let mut reference = ContextFrame::new("ref", FrameKind::Doc, "A reference", "");
    reference.content = None;
    reference.representation = Representation::Reference;
    let mut lying_digest = frame("lie", "what it is");
    lying_digest.content_digest = Some(Sha256Hasher.sha256_digest(b"what it claims"));
    vec![
        ProviderOutcome::accepted(
            "good",
            vec![
                frame("keep", &text("kept", 300)),
                frame("same", &text("kept", 300)),
                frame("twice", "first copy"),
                frame("twice", "second copy"),
                frame("too-big", &text("too big", 40_000)),
                unknown,
                no_content,
                reference,
                lying_digest,
            ],
        ),
        ProviderOutcome::quarantined(
            "liar",
            vec![frame("l1", "a"), frame("l2", "b")],
            vec![
                Violation {
                    anchor: Anchor::B1,
                    path: "frames".into(),
                    message: "over budget".into(),
                },
                Violation {
                    anchor: Anchor::B3,
                    path: "frames[0].token_cost".into(),
                    message: "wrong".into(),
                },
                Violation {
                    anchor: Anchor::B1,
                    path: "frames".into(),
                    message: "again".into(),
                },
            ],
        ),
        ProviderOutcome::without_frames(
            "egress",
            ProviderStatus::ConsentMissing {
                scopes: vec!["third-party-index".into()],
            },
        ),
        ProviderOutcome::without_frames("slow", ProviderStatus::TimedOut { after_ms: 2000 }),
        ProviderOutcome::without_frames(
            "dead",
            ProviderStatus::Crashed {
                detail: "exit status 101".into(),
            },
        ),
        ProviderOutcome::without_frames(
            "grumpy",
            ProviderStatus::Error {
                code: ErrorCode::from_wire("acme:quota"),
                message: "quota exceeded".into(),
            },
        ),
    ]
}

fn reason_of<'a>(c: &'a contextgraph_compose::Composition, id: &str) -> Vec<&'a FrameStatus> {
    c.audit
        .frames
        .iter()
        .filter(|f| f.frame.frame_id == id)
        .map(|f| &f.status)
        .collect()
}

#[test]
fn audit_names_every_offered_frame_with_its_reason() {
    let outcomes = everything_that_can_go_wrong();
    let c = composed(&outcomes, &budget(3000));
    assert_sound(&c, &outcomes);
    let excluded = |id: &str| -> Vec<Exclusion> {
        reason_of(&c, id)
            .into_iter()
            .map(|s| match s {
                FrameStatus::Excluded(e) => e.clone(),
                FrameStatus::Included(_) => panic!("{id} should be excluded"),
            })
            .collect()
    };
    assert!(matches!(
        reason_of(&c, "keep")[..],
        [FrameStatus::Included(_)]
    ));
    assert!(
        matches!(&excluded("same")[..], [Exclusion::Duplicate { of, .. }] if of.frame_id == "keep")
    );
    assert_eq!(
        excluded("twice"),
        [Exclusion::DuplicateId, Exclusion::DuplicateId]
    );
    assert!(
        matches!(&excluded("too-big")[..], [Exclusion::OverBudget { charge, remaining }] if charge > remaining)
    );
    assert_eq!(
        excluded("odd"),
        [Exclusion::UnknownKind {
            kind: "image".into()
        }]
    );
    assert_eq!(excluded("empty"), [Exclusion::NoContent]);
    assert!(matches!(
        &excluded("ref")[..],
        [Exclusion::UnresolvableReference { .. }]
    ));
    assert!(matches!(
        &excluded("lie")[..],
        [Exclusion::DigestMismatch { .. }]
    ));
    let quarantined = Exclusion::ProviderQuarantined {
        anchors: vec!["B1".into(), "B3".into()],
    };
    assert_eq!(excluded("l1"), std::slice::from_ref(&quarantined));
    assert_eq!(excluded("l2"), [quarantined]);
    // Sorted canonically.
    let ids: Vec<_> = c.audit.frames.iter().map(|f| &f.frame).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
}

#[test]
fn audit_reports_providers_that_contributed_nothing() {
    let outcomes = everything_that_can_go_wrong();
    let c = composed(&outcomes, &budget(3000));
    let by_id = |id: &str| {
        c.audit
            .providers
            .iter()
            .find(|p| p.provider_id == id)
            .expect("listed")
    };
    assert_eq!(c.audit.providers.len(), outcomes.len());
    assert_eq!(by_id("good").outcome, OutcomeAudit::Accepted);
    assert!(
        matches!(&by_id("liar").outcome, OutcomeAudit::Quarantined { anchors, violations } if anchors == &["B1", "B3"] && violations.len() == 3)
    );
    assert_eq!(
        by_id("egress").outcome,
        OutcomeAudit::ConsentMissing {
            scopes: vec!["third-party-index".into()]
        }
    );
    assert_eq!(
        by_id("slow").outcome,
        OutcomeAudit::TimedOut { after_ms: 2000 }
    );
    assert!(matches!(
        &by_id("dead").outcome,
        OutcomeAudit::Crashed { .. }
    ));
    assert_eq!(
        by_id("grumpy").outcome,
        OutcomeAudit::Error {
            code: "acme:quota".into(),
            message: "quota exceeded".into()
        }
    );
    assert_eq!(by_id("liar").frames_offered, 2);
    assert_eq!(by_id("liar").frames_included, 0);
    // Sentences a person can act on: provider, rule, next step.
    let liar = by_id("liar").explain();
    assert!(
        liar.contains("liar") && liar.contains("B1") && liar.contains("fix the provider"),
        "{liar}"
    );
    let egress = by_id("egress").explain();
    assert!(
        egress.contains("C6") && egress.contains("grant consent"),
        "{egress}"
    );
    let frame_line = c
        .audit
        .frames
        .iter()
        .find(|f| f.frame.frame_id == "l1")
        .expect("listed")
        .explain();
    assert!(
        frame_line.contains("liar") && frame_line.contains("B2"),
        "{frame_line}"
    );
}

#[test]
fn audit_usage_report_bills_exactly_the_included_frames_ur1() {
    let outcomes = everything_that_can_go_wrong();
    let c = composed(&outcomes, &budget(3000).with_as_of("2026-07-20T18:00:00Z"));
    assert!(c.usage.is_coherent());
    assert_eq!(c.usage.as_of.as_deref(), Some("2026-07-20T18:00:00Z"));
    assert_eq!(c.usage.budget_requested, 3000);
    for cit in &c.citations {
        assert!(
            c.usage.bills(&cit.frame),
            "A3: every rendered frame is billed"
        );
    }
    let billed: usize = c
        .usage
        .providers
        .iter()
        .map(|p| p.served_frames.len())
        .sum();
    assert_eq!(billed, c.citations.len());
    let good = &c
        .usage
        .providers
        .iter()
        .find(|p| p.provider_id == "good")
        .expect("listed");
    assert_eq!(good.frames_served + good.frames_rejected, 9);
    let liar = &c
        .usage
        .providers
        .iter()
        .find(|p| p.provider_id == "liar")
        .expect("listed");
    assert_eq!((liar.frames_served, liar.frames_rejected), (0, 2));
}

#[test]
fn audit_via_audited_outcome_quarantines_a_dishonest_answer_b2() {
    let query = ContextQuery::new("retry policy", 5, 100);
    let mut over = frame("o", &text("over", 800));
    over.token_cost = 10; // B3 lie that also hides a B1 breach
    let result = ContextQueryResult {
        frames: vec![over, frame("fine", "fine")],
        truncated: false,
        dropped_estimate: None,
    };
    let outcome = ProviderOutcome::audited("p", &query, result.clone());
    assert!(matches!(outcome.status, ProviderStatus::Quarantined { .. }));
    let c = composed(std::slice::from_ref(&outcome), &unlimited());
    assert!(
        c.citations.is_empty(),
        "B2: no frame of a violating answer is used"
    );
    assert_eq!(c.audit.frames.len(), 2);
    let honest = ContextQueryResult {
        frames: vec![frame("fine", "fine")],
        ..result
    };
    let accepted = ProviderOutcome::audited("p", &query, honest);
    assert!(matches!(accepted.status, ProviderStatus::Accepted { .. }));
}

#[test]
fn audit_duplicate_provider_ids_are_refused_with_a_named_error() {
    let outcomes = vec![
        ProviderOutcome::accepted("p", vec![]),
        ProviderOutcome::accepted("p", vec![]),
    ];
    let error = contextgraph_compose::compose(&outcomes, &unlimited()).expect_err("ambiguous");
    assert!(
        error.to_string().contains("\"p\"") && error.to_string().contains("A1"),
        "{error}"
    );
}
