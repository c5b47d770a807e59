//! Serialization follows the wire's omission rules exactly, and
//! deserialization is as lenient as the protocol requires (U1, U2, `null`).

use contextgraph_types::*;
use serde_json::{json, Value};

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("serializes")
}

#[test]
fn a_minimal_full_frame_emits_only_required_members_and_content() {
    let f = ContextFrame::new("id", FrameKind::Doc, "Title", "abc");
    assert_eq!(
        to_value(&f),
        json!({"id": "id", "kind": "doc", "title": "Title", "content": "abc", "score": 0.0, "token_cost": 1})
    );
}

#[test]
fn full_representation_and_empty_lists_are_omitted_never_null() {
    let f = ContextFrame::new("id", FrameKind::Snippet, "T", "x");
    let text = serde_json::to_string(&f).unwrap();
    for absent in [
        "representation",
        "provenance",
        "relations",
        "null",
        "content_digest",
        "embedding",
    ] {
        assert!(!text.contains(absent), "{absent} in {text}");
    }
    let mut compact = f.clone();
    compact.representation = Representation::Compact;
    assert_eq!(to_value(&compact)["representation"], "compact");
}

#[test]
fn query_omits_empty_kinds_anchors_and_preferences() {
    let q = ContextQuery::new("goal", 5, 100);
    assert_eq!(
        to_value(&q),
        json!({"goal": "goal", "max_frames": 5, "max_tokens": 100})
    );
    let mut q2 = q.clone();
    q2.kinds = vec![FrameKind::Doc];
    q2.anchors = vec!["src/a.rs".into()];
    q2.representation_preferences = vec![Representation::Compact];
    let v = to_value(&q2);
    assert_eq!(v["kinds"], json!(["doc"]));
    assert_eq!(v["anchors"], json!(["src/a.rs"]));
    assert_eq!(v["representation_preferences"], json!(["compact"]));
}

#[test]
fn data_flow_omits_empty_scopes_and_capabilities_omit_empty_lists() {
    let flow = DataFlow {
        reads: true,
        ..DataFlow::default()
    };
    assert_eq!(
        to_value(&flow),
        json!({"reads": true, "writes": false, "egress": false})
    );
    let caps = Capabilities::default();
    let v = to_value(&caps);
    assert!(v.get("representations").is_none());
    assert!(v.get("embeddings_fingerprint").is_none());
    assert_eq!(v["query"], json!({"kinds": []}));
}

#[test]
fn null_is_accepted_wherever_a_member_is_optional() {
    let f: ContextFrame = serde_json::from_value(json!({
        "id": "a", "kind": "doc", "title": "t", "score": 0.5, "token_cost": 0,
        "content": null, "content_digest": null, "uri": null, "representation": null,
        "provenance": null, "relations": null, "citation_label": null, "embedding": null,
        "valid_from": null, "recorded_at": null
    }))
    .expect("nulls accepted");
    assert!(f.content.is_none() && f.provenance.is_empty() && f.relations.is_empty());
    assert_eq!(f.representation, Representation::Full);

    let caps: Capabilities = serde_json::from_value(json!({
        "query": {"kinds": null}, "correlation": null, "graph": null,
        "embeddings_fingerprint": null, "verify": null, "representations": null, "resolve": null
    }))
    .expect("nulls accepted");
    assert_eq!(caps, Capabilities::default());

    let q: ContextQuery = serde_json::from_value(json!({
        "goal": "g", "max_frames": 1, "max_tokens": 1, "kinds": null, "anchors": null,
        "as_of": null, "embedding": null, "query_text": null, "representation_preferences": null
    }))
    .expect("nulls accepted");
    assert_eq!(q, ContextQuery::new("g", 1, 1));
}

#[test]
fn u1_unknown_members_are_ignored_everywhere() {
    let r: ContextQueryResult = serde_json::from_value(json!({
        "frames": [{"id": "a", "kind": "doc", "title": "t", "score": 0.5, "token_cost": 0,
                    "x-vendor": {"deep": [1, 2]}, "provenance": [{"type": "file", "extra": 1}]}],
        "truncated": false, "future_member": true
    }))
    .expect("unknown members ignored");
    assert_eq!(r.frames[0].provenance[0].kind, "file");
}

#[test]
fn u2_an_unknown_kind_does_not_make_the_rest_of_the_answer_unreadable() {
    let r: ContextQueryResult = serde_json::from_value(json!({
        "frames": [
            {"id": "a", "kind": "image", "title": "t", "score": 0.5, "token_cost": 0},
            {"id": "b", "kind": "doc", "title": "t", "content": "abcd", "score": 0.5, "token_cost": 1}
        ],
        "truncated": false
    }))
    .expect("unknown kind tolerated");
    assert_eq!(r.frames[0].kind, FrameKind::Other("image".into()));
    assert!(!r.frames[0].kind.is_known());
    assert_eq!(r.frames[1].kind, FrameKind::Doc);
    // And it round-trips verbatim.
    assert_eq!(to_value(&r.frames[0])["kind"], "image");
}

#[test]
fn provenance_kind_is_type_on_the_wire() {
    let p = Provenance {
        kind: "file".into(),
        uri: Some("file:///a".into()),
        ..Provenance::default()
    };
    assert_eq!(to_value(&p), json!({"type": "file", "uri": "file:///a"}));
}

#[test]
fn verdicts_are_flat_and_unknown_statuses_read_as_unknown() {
    let v = FrameVerdict {
        frame: FrameId::new("p", "f", Some("sha256:x".into())),
        verdict: Verdict::Stale {
            replacement_digest: Some("sha256:y".into()),
        },
    };
    assert_eq!(
        to_value(&v),
        json!({"frame": {"provider_id": "p", "frame_id": "f", "content_digest": "sha256:x"},
               "status": "stale", "replacement_digest": "sha256:y"})
    );
    let odd: FrameVerdict = serde_json::from_value(
        json!({"frame": {"provider_id": "p", "frame_id": "f"}, "status": "expired"}),
    )
    .unwrap();
    assert_eq!(odd.verdict, Verdict::Unknown);
    assert!(!odd.verdict.allows_reuse());
    let gone: FrameVerdict = serde_json::from_value(
        json!({"frame": {"provider_id": "p", "frame_id": "f", "content_digest": null}, "status": "gone", "replacement_digest": null}),
    )
    .unwrap();
    assert_eq!(gone.verdict, Verdict::Gone);
}

#[test]
fn a_verdict_missing_from_the_response_counts_as_unknown() {
    let asked = FrameId::new("p", "f", Some("sha256:x".into()));
    let resp = VerifyResponse {
        verdicts: vec![FrameVerdict {
            frame: FrameId::new("p", "f", Some("sha256:OTHER".into())),
            verdict: Verdict::Valid,
        }],
    };
    // A `valid` for a different digest must not be shifted onto the asked identity.
    assert_eq!(resp.verdict_for(&asked), Verdict::Unknown);
}

#[test]
fn error_codes_and_scopes_round_trip_verbatim() {
    for code in ["bad_request", "acme:quota", "something_new"] {
        let c: ErrorCode = serde_json::from_value(json!(code)).unwrap();
        assert_eq!(to_value(&c), json!(code));
    }
    for scope in ["local-only", "org-tenant", "acme:vault"] {
        let s: EgressScope = serde_json::from_value(json!(scope)).unwrap();
        assert_eq!(to_value(&s), json!(scope));
    }
}
