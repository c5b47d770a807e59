//! One test per requirement anchor the types enforce: start from a frame,
//! result or ack that is valid, break exactly one rule, and check the
//! violation is reported with that anchor and the right path.

use contextgraph_types::validate::{handshake_ack, validate_frame};
use contextgraph_types::*;

/// A stand-in hasher so D1 recomputation can be tested without a SHA-256
/// dependency: a deterministic, content-sensitive fake digest.
struct FakeHasher;

impl ContentHasher for FakeHasher {
    fn sha256_digest(&self, bytes: &[u8]) -> String {
        let mut acc = [0u8; 32];
        for (i, b) in bytes.iter().enumerate() {
            acc[i % 32] = acc[i % 32].wrapping_mul(31).wrapping_add(*b);
        }
        digest::format_sha256(&acc)
    }
}

fn hex64(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

fn good_frame() -> ContextFrame {
    let content = "Retry behavior is set in Config::retry.";
    let mut f = ContextFrame::new("repo:retry-doc", FrameKind::Doc, "Retry policy", content);
    f.content_digest = Some(FakeHasher.sha256_digest(content.as_bytes()));
    f.score = 0.5;
    f.citation_label = Some("retry.md L1-20".into());
    f.recorded_at = Some("2026-07-20T18:00:00Z".into());
    f.provenance = vec![Provenance {
        kind: "file".into(),
        uri: Some("file:///repo/docs/retry.md".into()),
        range: Some("L1-20".into()),
        digest: Some(hex64('0')),
        method: None,
        by: None,
    }];
    f.relations = vec![Relation {
        rel: "doc.documents".into(),
        target_uri: "file:///repo/src/config.rs".into(),
        display_name: Some("config.rs".into()),
    }];
    f
}

fn anchors(v: &[Violation]) -> Vec<(Anchor, String)> {
    v.iter().map(|v| (v.anchor, v.path.clone())).collect()
}

/// Exactly one violation, with this anchor and path.
#[track_caller]
fn assert_only(v: Vec<Violation>, anchor: Anchor, path: &str) {
    assert_eq!(anchors(&v), vec![(anchor, path.to_owned())], "{v:#?}");
    assert!(!v[0].message.is_empty());
}

#[test]
fn the_baseline_frame_is_valid() {
    assert!(good_frame().validate_with(&FakeHasher).is_empty());
}

#[test]
fn f1_score_outside_unit_interval_or_nan_is_reported() {
    for bad in [-0.01f32, 1.01, f32::NAN, f32::INFINITY] {
        let mut f = good_frame();
        f.score = bad;
        assert_only(f.validate(), Anchor::F1, "score");
    }
    for ok in [0.0f32, 1.0] {
        let mut f = good_frame();
        f.score = ok;
        assert!(f.validate().is_empty());
    }
}

#[test]
fn f2_empty_or_blank_title_is_reported() {
    for bad in ["", "   "] {
        let mut f = good_frame();
        f.title = bad.into();
        assert_only(f.validate(), Anchor::F2, "title");
    }
}

#[test]
fn f3_missing_or_empty_citation_label_is_reported() {
    let mut f = good_frame();
    f.citation_label = None;
    assert_only(f.validate(), Anchor::F3, "citation_label");
    f.citation_label = Some(String::new());
    assert_only(f.validate(), Anchor::F3, "citation_label");
}

#[test]
fn f4_malformed_timestamps_are_reported_per_field() {
    for (field, bad) in [
        ("recorded_at", "2026-07-20t18:00:00Z"),
        ("valid_from", "2026-07-20T18:00:00+01:00"),
        ("valid_to", "2026-02-30T00:00:00Z"),
    ] {
        let mut f = good_frame();
        match field {
            "recorded_at" => f.recorded_at = Some(bad.into()),
            "valid_from" => f.valid_from = Some(bad.into()),
            _ => f.valid_to = Some(bad.into()),
        }
        assert_only(f.validate(), Anchor::F4, field);
    }
    let mut f = good_frame();
    f.valid_from = Some("2026-01-02T00:00:00Z".into());
    f.valid_to = Some("2026-01-01T23:59:59.9Z".into());
    assert_only(f.validate(), Anchor::F4, "valid_to");
}

#[test]
fn f5_file_provenance_needs_a_well_formed_digest_uri_and_range() {
    let mut f = good_frame();
    f.provenance[0].digest = Some("sha256:0101".into());
    assert_only(f.validate(), Anchor::F5, "provenance[0].digest");

    let mut f = good_frame();
    f.provenance[0].digest = Some(hex64('A'));
    assert_only(f.validate(), Anchor::F5, "provenance[0].digest");

    let mut f = good_frame();
    f.provenance[0].digest = None;
    assert_only(f.validate(), Anchor::F5, "provenance[0].digest");

    let mut f = good_frame();
    f.provenance[0].uri = None;
    assert_only(f.validate(), Anchor::F5, "provenance[0].uri");

    let mut f = good_frame();
    f.provenance[0].range = Some("L20-1".into());
    assert_only(f.validate(), Anchor::F5, "provenance[0].range");

    // Non-file provenance needs no digest.
    let mut f = good_frame();
    f.provenance.push(Provenance {
        kind: "derivation".into(),
        ..Provenance::default()
    });
    assert!(f.validate().is_empty());
}

#[test]
fn b3_token_cost_must_equal_ceil_bytes_over_four() {
    let mut f = good_frame();
    f.token_cost += 1;
    assert_only(f.validate(), Anchor::B3, "token_cost");
    f.token_cost -= 2;
    assert_only(f.validate(), Anchor::B3, "token_cost");
}

#[test]
fn d1_content_digest_grammar_and_recomputation() {
    let mut f = good_frame();
    f.content_digest = Some("sha256:9f2c3e7a1b".into());
    assert_only(f.validate(), Anchor::D1, "content_digest");

    // Well-formed but not the digest of the content: only a hasher can tell.
    let mut f = good_frame();
    f.content_digest = Some(hex64('b'));
    assert!(f.validate().is_empty());
    assert_only(f.validate_with(&FakeHasher), Anchor::D1, "content_digest");

    // Changing the content changes the digest it should have.
    let mut f = good_frame();
    f.content = Some("Retry behavior is set elsewhere now!!!".into());
    assert_only(f.validate_with(&FakeHasher), Anchor::D1, "content_digest");
}

#[test]
fn g1_g2_relations_need_display_name_and_target() {
    let mut f = good_frame();
    f.relations[0].display_name = None;
    assert_only(f.validate(), Anchor::G1, "relations[0].display_name");
    f.relations[0].display_name = Some(" ".into());
    assert_only(f.validate(), Anchor::G1, "relations[0].display_name");

    let mut f = good_frame();
    f.relations[0].target_uri = String::new();
    assert_only(f.validate(), Anchor::G2, "relations[0].target_uri");
}

fn reference_frame() -> ContextFrame {
    let mut f = good_frame();
    f.representation = Representation::Reference;
    f.content = None;
    f.content_digest = None;
    f.token_cost = 0;
    f.canonical_content_hash = Some(hex64('c'));
    f.content_ref = Some(ContentRef {
        provider_id: "repo".into(),
        uri: "context://repo/records/1".into(),
        expires_at: None,
    });
    f
}

fn compact_frame() -> ContextFrame {
    let mut f = reference_frame();
    f.representation = Representation::Compact;
    let content = "outline";
    f.content = Some(content.into());
    f.token_cost = token_cost_for(Some(content));
    f.content_digest = Some(FakeHasher.sha256_digest(content.as_bytes()));
    f.transform = Some(Transform {
        method: "outline".into(),
        implementation: "test".into(),
        version: "1".into(),
    });
    f
}

#[test]
fn p1_full_frames_carry_content_and_no_reference_members() {
    let mut f = good_frame();
    f.content = None;
    f.content_digest = None;
    f.token_cost = 0;
    assert_only(f.validate(), Anchor::P1, "content");

    let mut f = good_frame();
    f.content_ref = reference_frame().content_ref;
    assert_only(f.validate(), Anchor::P1, "content_ref");

    let mut f = good_frame();
    f.transform = compact_frame().transform;
    assert_only(f.validate(), Anchor::P1, "transform");
}

#[test]
fn p2_compact_frames_carry_all_five_members() {
    assert!(compact_frame().validate_with(&FakeHasher).is_empty());
    let mut f = compact_frame();
    f.transform = None;
    assert_only(f.validate(), Anchor::P2, "transform");
    let mut f = compact_frame();
    f.content_ref = None;
    assert_only(f.validate(), Anchor::P2, "content_ref");
    let mut f = compact_frame();
    f.canonical_content_hash = Some("sha256:short".into());
    assert_only(f.validate(), Anchor::P2, "canonical_content_hash");
}

#[test]
fn p3_reference_frames_carry_no_content_not_even_empty() {
    assert!(reference_frame().validate().is_empty());
    let mut f = reference_frame();
    f.content = Some(String::new());
    assert_only(f.validate(), Anchor::P3, "content");
    let mut f = reference_frame();
    f.content_digest = Some(hex64('d'));
    assert_only(f.validate(), Anchor::P3, "content_digest");
}

#[test]
fn p4_a_reference_frame_costs_zero() {
    let mut f = reference_frame();
    f.token_cost = 12;
    assert_only(f.validate(), Anchor::B3, "token_cost");
}

#[test]
fn e1_frame_embedding_dimension_must_match_its_fingerprint() {
    let mut f = good_frame();
    f.embedding = Some(FrameEmbedding {
        fingerprint: "bge-small-en-v1.5/3/l2".into(),
        vector: Some(vec![0.1, 0.2]),
    });
    assert_only(f.validate(), Anchor::E1, "embedding.vector");
    f.embedding = Some(FrameEmbedding {
        fingerprint: "no-dimension".into(),
        vector: None,
    });
    assert_only(f.validate(), Anchor::E1, "embedding.fingerprint");
}

#[test]
fn e1_a_query_vector_must_match_the_provider_dimension() {
    let mut q = ContextQuery::new("goal", 5, 100);
    q.embedding = Some(vec![0.0; 3]);
    assert!(q.embedding_violation(Some("m/3/l2")).is_none());
    let v = q.embedding_violation(Some("m/384/l2")).expect("violation");
    assert_eq!(v.anchor, Anchor::E1);
    assert!(q.embedding_violation(None).is_some());
    q.embedding = None;
    assert!(q.embedding_violation(Some("m/384/l2")).is_none());
}

fn result_of(frames: Vec<ContextFrame>) -> ContextQueryResult {
    ContextQueryResult {
        frames,
        truncated: false,
        dropped_estimate: None,
    }
}

#[test]
fn b1_total_cost_over_max_tokens_is_reported() {
    let f = good_frame();
    let q = ContextQuery::new("g", 5, f.token_cost * 2 - 1);
    let mut second = good_frame();
    second.id = "repo:other".into();
    let v = result_of(vec![f, second]).validate(&q);
    assert_eq!(anchors(&v), vec![(Anchor::B1, "frames".to_owned())]);
}

#[test]
fn b4_more_frames_than_max_frames_is_reported() {
    let mut second = good_frame();
    second.id = "repo:other".into();
    let q = ContextQuery::new("g", 1, 10_000);
    let v = result_of(vec![good_frame(), second]).validate(&q);
    assert_eq!(anchors(&v), vec![(Anchor::B4, "frames".to_owned())]);
}

#[test]
fn q1_a_frame_of_an_unrequested_kind_is_reported() {
    let mut q = ContextQuery::new("g", 5, 10_000);
    q.kinds = vec![FrameKind::Symbol];
    let v = result_of(vec![good_frame()]).validate(&q);
    assert_eq!(anchors(&v), vec![(Anchor::Q1, "frames[0].kind".to_owned())]);
    q.kinds = vec![FrameKind::Symbol, FrameKind::Doc];
    assert!(result_of(vec![good_frame()]).validate(&q).is_empty());
}

#[test]
fn as_of_frames_dated_after_the_pin_are_reported_as_instants() {
    let mut q = ContextQuery::new("g", 5, 10_000);
    // 18:00:00Z is after 17:59:59.5Z although it sorts before it as a string.
    q.as_of = Some("2026-07-20T17:59:59.5Z".into());
    let v = result_of(vec![good_frame()]).validate(&q);
    assert_eq!(
        anchors(&v),
        vec![(Anchor::AsOf, "frames[0].recorded_at".to_owned())]
    );
    q.as_of = Some("2026-07-20T18:00:00.000Z".into());
    assert!(result_of(vec![good_frame()]).validate(&q).is_empty());
}

#[test]
fn paths_name_the_frame_and_member_deep_inside_a_result() {
    let mut frames: Vec<ContextFrame> = (0..4)
        .map(|i| {
            let mut f = good_frame();
            f.id = format!("repo:{i}");
            f
        })
        .collect();
    frames[3].provenance[0].digest = Some("sha256:xyz".into());
    frames[1].score = 2.0;
    let v = result_of(frames).validate(&ContextQuery::new("g", 10, 10_000));
    assert_eq!(
        anchors(&v),
        vec![
            (Anchor::F1, "frames[1].score".to_owned()),
            (Anchor::F5, "frames[3].provenance[0].digest".to_owned()),
        ]
    );
    assert!(v[1]
        .to_string()
        .starts_with("F5 at frames[3].provenance[0].digest: "));
}

#[test]
fn every_violation_is_reported_not_just_the_first() {
    let mut f = good_frame();
    f.score = f32::NAN;
    f.title = String::new();
    f.citation_label = None;
    f.token_cost = 999;
    f.content_digest = Some("md5:abc".into());
    f.recorded_at = Some("yesterday".into());
    let got: Vec<Anchor> = f.validate().into_iter().map(|v| v.anchor).collect();
    for a in [
        Anchor::F1,
        Anchor::F2,
        Anchor::F3,
        Anchor::B3,
        Anchor::D1,
        Anchor::F4,
    ] {
        assert!(got.contains(&a), "{a} missing from {got:?}");
    }
}

#[test]
fn repeated_frame_ids_are_reported() {
    let v =
        result_of(vec![good_frame(), good_frame()]).validate(&ContextQuery::new("g", 5, 10_000));
    assert_eq!(anchors(&v), vec![(Anchor::D2, "frames[1].id".to_owned())]);
}

#[test]
fn truncated_must_agree_with_dropped_estimate() {
    let mut r = result_of(vec![good_frame()]);
    r.dropped_estimate = Some(3);
    let v = r.validate(&ContextQuery::new("g", 5, 10_000));
    assert_eq!(
        anchors(&v),
        vec![(Anchor::Truncated, "dropped_estimate".to_owned())]
    );
    r.truncated = true;
    assert!(r.validate(&ContextQuery::new("g", 5, 10_000)).is_empty());
}

#[test]
fn frame_paths_can_be_prefixed() {
    let mut f = good_frame();
    f.title = String::new();
    let v = validate_frame(&f, "frames[7]", None);
    assert_eq!(
        anchors(&v),
        vec![(Anchor::F2, "frames[7].title".to_owned())]
    );
}

fn provider(name: &str, version: &str, flow: DataFlow) -> ProviderInfo {
    ProviderInfo {
        name: name.into(),
        version: version.into(),
        data_flow: flow,
    }
}

#[test]
fn h1_h3_ack_version_must_be_grammar_valid_and_in_the_host_family() {
    let p = provider("repo", "0.1.0", DataFlow::default());
    let caps = Capabilities::default();
    assert!(handshake_ack("contextgraph/1.3", &p, &caps, PROTOCOL_VERSION).is_empty());
    let v = handshake_ack("contextgraph/2.0", &p, &caps, PROTOCOL_VERSION);
    assert_eq!(
        anchors(&v),
        vec![(Anchor::H3, "protocol_version".to_owned())]
    );
    assert!(v[0].message.contains("contextgraph/2") && v[0].message.contains("contextgraph/1"));
    let v = handshake_ack("cg/1.0", &p, &caps, PROTOCOL_VERSION);
    assert_eq!(
        anchors(&v),
        vec![(Anchor::H1, "protocol_version".to_owned())]
    );
}

#[test]
fn h2_empty_name_or_version_is_reported() {
    let caps = Capabilities::default();
    let v = handshake_ack(
        PROTOCOL_VERSION,
        &provider("", " ", DataFlow::default()),
        &caps,
        PROTOCOL_VERSION,
    );
    assert_eq!(
        anchors(&v),
        vec![
            (Anchor::H2, "provider.name".to_owned()),
            (Anchor::H2, "provider.version".to_owned())
        ]
    );
}

#[test]
fn c5_off_machine_scope_with_egress_false_or_malformed_scope_is_reported() {
    let caps = Capabilities::default();
    let lying = DataFlow {
        reads: true,
        egress_scopes: vec![EgressScope::LocalOnly, EgressScope::ThirdPartyModel],
        ..DataFlow::default()
    };
    let v = handshake_ack(
        PROTOCOL_VERSION,
        &provider("p", "1", lying),
        &caps,
        PROTOCOL_VERSION,
    );
    assert_eq!(
        anchors(&v),
        vec![(Anchor::C5, "provider.data_flow.egress_scopes[1]".to_owned())]
    );
    let malformed = DataFlow {
        egress: true,
        egress_scopes: vec![EgressScope::from_wire("nonamespace")],
        ..DataFlow::default()
    };
    let v = handshake_ack(
        PROTOCOL_VERSION,
        &provider("p", "1", malformed),
        &caps,
        PROTOCOL_VERSION,
    );
    assert_eq!(
        anchors(&v),
        vec![(Anchor::C5, "provider.data_flow.egress_scopes[0]".to_owned())]
    );
}

#[test]
fn compact_without_resolve_and_bad_fingerprint_are_reported_at_the_handshake() {
    let p = provider("p", "1", DataFlow::default());
    let caps = Capabilities {
        representations: vec![Representation::Compact],
        embeddings_fingerprint: Some("model-without-dims".into()),
        ..Capabilities::default()
    };
    let v = handshake_ack(PROTOCOL_VERSION, &p, &caps, PROTOCOL_VERSION);
    assert_eq!(
        anchors(&v),
        vec![
            (Anchor::Resolve, "capabilities.representations".to_owned()),
            (Anchor::E1, "capabilities.embeddings_fingerprint".to_owned()),
        ]
    );
}

#[test]
fn a_query_with_bad_as_of_or_empty_goal_is_reported() {
    let mut q = ContextQuery::new(" ", 5, 100);
    q.as_of = Some("2026-07-20 18:00:00Z".into());
    q.embedding = Some(vec![0.0, f32::NAN]);
    let got = anchors(&q.validate());
    assert_eq!(
        got,
        vec![
            (Anchor::Shape, "query.goal".to_owned()),
            (Anchor::F4, "query.as_of".to_owned()),
            (Anchor::E1, "query.embedding[1]".to_owned()),
        ]
    );
}
