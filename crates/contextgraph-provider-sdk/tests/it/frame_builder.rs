//! FrameBuilder: `token_cost` (B3) and `content_digest` (D1) are computed
//! from the content, scores are clamped (F1), and a label always exists (F3).

use contextgraph_provider_sdk::{sha256_digest, FrameBuilder, Sha256Hasher};
use contextgraph_types::{FrameKind, Timestamp};

#[test]
fn b3_d1_cost_and_digest_are_computed_from_the_content() {
    let content = "日本語 text: 14+ bytes";
    let frame = FrameBuilder::new("id", FrameKind::Doc, "Title", content).build();
    assert_eq!(frame.token_cost, content.len().div_ceil(4) as u32);
    assert_eq!(
        frame.content_digest,
        Some(sha256_digest(content.as_bytes()))
    );
    assert!(frame.has_honest_token_cost());
    assert!(
        frame.validate_with(&Sha256Hasher).is_empty(),
        "{:?}",
        frame.validate_with(&Sha256Hasher)
    );
}

#[test]
fn b3_empty_content_costs_nothing() {
    let frame = FrameBuilder::new("id", FrameKind::Fact, "Title", "").build();
    assert_eq!(frame.token_cost, 0);
    assert_eq!(frame.content_digest, Some(sha256_digest(b"")));
}

#[test]
fn f1_scores_are_clamped_and_nan_is_zero() {
    let score = |s: f32| {
        FrameBuilder::new("i", FrameKind::Doc, "t", "c")
            .score(s)
            .build()
            .score
    };
    assert_eq!(score(0.25), 0.25);
    assert_eq!(score(1.5), 1.0);
    assert_eq!(score(-3.0), 0.0);
    assert_eq!(score(f32::NAN), 0.0);
    assert_eq!(score(f32::INFINITY), 1.0);
}

#[test]
fn f3_citation_label_defaults_to_the_title_and_can_be_set() {
    let default = FrameBuilder::new("i", FrameKind::Doc, "Retry policy", "c").build();
    assert_eq!(default.citation_label.as_deref(), Some("Retry policy"));
    let set = FrameBuilder::new("i", FrameKind::Doc, "Retry policy", "c")
        .citation_label("retry.md L1-20")
        .build();
    assert_eq!(set.citation_label.as_deref(), Some("retry.md L1-20"));
    let blank = FrameBuilder::new("i", FrameKind::Doc, "Retry policy", "c")
        .citation_label("  ")
        .build();
    assert_eq!(blank.citation_label.as_deref(), Some("Retry policy"));
}

#[test]
fn f4_timestamps_are_written_in_wire_form() {
    let t = Timestamp::parse("2026-07-20T18:00:00.500Z").unwrap();
    let frame = FrameBuilder::new("i", FrameKind::Episode, "t", "c")
        .recorded_at(t)
        .valid_from(t)
        .valid_to(t)
        .build();
    assert_eq!(frame.recorded_at.as_deref(), Some("2026-07-20T18:00:00.5Z"));
    assert_eq!(frame.valid_from, frame.recorded_at);
    assert_eq!(frame.valid_to, frame.recorded_at);
}

#[test]
fn g1_g2_relations_and_uri_are_carried() {
    let frame = FrameBuilder::new("i", FrameKind::Symbol, "net::retry", "fn retry()")
        .uri("file:///repo/src/net.rs")
        .relation(
            "code.calls",
            "file:///repo/src/backoff.rs",
            "backoff::delay",
        )
        .build();
    assert_eq!(frame.uri.as_deref(), Some("file:///repo/src/net.rs"));
    assert_eq!(frame.relations.len(), 1);
    assert_eq!(
        frame.relations[0].display_name.as_deref(),
        Some("backoff::delay")
    );
    assert!(frame.validate().is_empty());
}

#[test]
fn try_build_reports_what_the_builder_cannot_fix() {
    let violations = FrameBuilder::new("", FrameKind::Doc, "", "c")
        .relation("code.calls", "", "")
        .try_build()
        .unwrap_err();
    let anchors: Vec<String> = violations.iter().map(|v| v.anchor.to_string()).collect();
    for expected in ["shape", "F2", "F3", "G1", "G2"] {
        assert!(
            anchors.iter().any(|a| a == expected),
            "{expected} missing from {anchors:?}"
        );
    }
    assert!(FrameBuilder::new("i", FrameKind::Doc, "t", "c")
        .try_build()
        .is_ok());
}
