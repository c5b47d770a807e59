//! Property: encode → decode is the identity for generated envelopes, every
//! encoding is exactly one line, and every encoding of a protocol envelope
//! validates against the envelope schema.

use contextgraph_codec::{decode_envelope, encode_line, Envelope};
use contextgraph_testkit::schema_errors;
use contextgraph_types::*;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

/// Strings with the characters that break naive framers: newlines, quotes,
/// backslashes, control characters, line separators, non-BMP characters.
fn nasty_string() -> impl Strategy<Value = String> {
    vec(
        prop_oneof![
            Just('\n'),
            Just('\r'),
            Just('"'),
            Just('\\'),
            Just('\u{0}'),
            Just('\u{2028}'),
            Just('\u{1F980}'),
            Just('<'),
            any::<char>(),
            proptest::char::range('a', 'z'),
        ],
        0..24,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn non_empty() -> impl Strategy<Value = String> {
    nasty_string().prop_map(|s| if s.is_empty() { "x".to_owned() } else { s })
}

fn kind() -> impl Strategy<Value = FrameKind> {
    prop_oneof![
        proptest::sample::select(FrameKind::KNOWN.to_vec()),
        "[a-z]{1,8}".prop_map(|s| FrameKind::from_wire(&s)),
    ]
}

fn timestamp() -> impl Strategy<Value = String> {
    (0i64..4_102_444_800, 0u32..1_000_000_000)
        .prop_map(|(s, n)| Timestamp::from_unix(s, n).to_wire())
}

fn digest() -> impl Strategy<Value = String> {
    "[0-9a-f]{64}".prop_map(|h| format!("sha256:{h}"))
}

fn provenance() -> impl Strategy<Value = Provenance> {
    (
        non_empty(),
        option::of(non_empty()),
        option::of((1u32..500, 0u32..50)),
        option::of(digest()),
        option::of(nasty_string()),
    )
        .prop_map(|(kind, uri, range, digest, by)| Provenance {
            kind,
            uri,
            range: range.map(|(a, n)| format!("L{a}-{}", a + n)),
            digest,
            method: None,
            by,
        })
}

fn relation() -> impl Strategy<Value = Relation> {
    (non_empty(), non_empty(), option::of(non_empty())).prop_map(
        |(rel, target_uri, display_name)| Relation {
            rel,
            target_uri,
            display_name,
        },
    )
}

fn frame() -> impl Strategy<Value = ContextFrame> {
    (
        (
            non_empty(),
            kind(),
            non_empty(),
            nasty_string(),
            0.0f32..=1.0f32,
            option::of(digest()),
        ),
        (
            option::of(timestamp()),
            option::of(timestamp()),
            vec(provenance(), 0..3),
            vec(relation(), 0..3),
            option::of(non_empty()),
        ),
        option::of(vec(-1.0f32..1.0, 0..4)),
    )
        .prop_map(
            |(
                (id, kind, title, content, score, content_digest),
                (recorded_at, valid_from, provenance, relations, label),
                vector,
            )| {
                let mut f = ContextFrame::new(id, kind, title, content);
                f.score = score;
                f.content_digest = content_digest;
                f.recorded_at = recorded_at;
                f.valid_from = valid_from;
                f.provenance = provenance;
                f.relations = relations;
                f.citation_label = label;
                f.embedding = vector.map(|v| FrameEmbedding {
                    fingerprint: format!("m/{}", v.len()),
                    vector: Some(v),
                });
                f
            },
        )
}

fn query() -> impl Strategy<Value = ContextQuery> {
    (
        non_empty(),
        option::of(nasty_string()),
        vec(kind(), 0..3),
        vec(nasty_string(), 0..3),
        any::<u32>(),
        any::<u32>(),
        option::of(timestamp()),
    )
        .prop_map(
            |(goal, query_text, kinds, anchors, max_frames, max_tokens, as_of)| {
                let mut q = ContextQuery::new(goal, max_frames, max_tokens);
                q.query_text = query_text;
                q.kinds = kinds;
                q.anchors = anchors;
                q.as_of = as_of;
                q
            },
        )
}

fn frame_id() -> impl Strategy<Value = FrameId> {
    (non_empty(), non_empty(), option::of(digest())).prop_map(|(p, f, d)| FrameId::new(p, f, d))
}

fn verdict() -> impl Strategy<Value = Verdict> {
    prop_oneof![
        Just(Verdict::Valid),
        Just(Verdict::Gone),
        Just(Verdict::Unknown),
        option::of(digest()).prop_map(|replacement_digest| Verdict::Stale { replacement_digest }),
    ]
}

fn envelope() -> impl Strategy<Value = Envelope> {
    let id = || option::of(non_empty());
    prop_oneof![
        Just(Envelope::handshake()),
        (id(), query()).prop_map(|(id, query)| Envelope::Query { id, query }),
        (
            id(),
            vec(frame(), 0..4),
            any::<bool>(),
            option::of(any::<u32>())
        )
            .prop_map(
                |(id, frames, truncated, dropped_estimate)| Envelope::Frames {
                    id,
                    result: ContextQueryResult {
                        frames,
                        truncated,
                        dropped_estimate
                    }
                }
            ),
        vec(frame_id(), 0..4).prop_map(|frames| Envelope::Verify {
            request: VerifyRequest { frames }
        }),
        vec((frame_id(), verdict()), 0..4).prop_map(|v| Envelope::Verified {
            response: VerifyResponse {
                verdicts: v
                    .into_iter()
                    .map(|(frame, verdict)| FrameVerdict { frame, verdict })
                    .collect()
            }
        }),
        Just(Envelope::Shutdown),
        (
            id(),
            option::of("[a-z_]{1,12}".prop_map(|c| ErrorCode::from_wire(&c))),
            non_empty()
        )
            .prop_map(|(id, code, message)| Envelope::Error { id, code, message }),
        (
            non_empty(),
            non_empty(),
            any::<bool>(),
            vec(kind(), 0..3),
            any::<bool>()
        )
            .prop_map(|(name, version, egress, kinds, correlation)| {
                Envelope::HandshakeAck {
                    protocol_version: PROTOCOL_VERSION.to_owned(),
                    provider: ProviderInfo {
                        name,
                        version,
                        data_flow: DataFlow {
                            reads: true,
                            writes: false,
                            egress,
                            egress_scopes: vec![],
                        },
                    },
                    capabilities: Capabilities {
                        query: QueryCapability { kinds },
                        correlation,
                        ..Capabilities::default()
                    },
                }
            }),
        (
            "[a-z]{1,10}".prop_filter("not a protocol type", |t| {
                !contextgraph_codec::ENVELOPE_TYPES.contains(&t.as_str())
            }),
            id()
        )
            .prop_map(|(type_name, id)| Envelope::Unknown { type_name, id }),
    ]
}

/// Whether the schema applies: it knows the seven kinds and protocol types only.
fn schema_applies(env: &Envelope) -> bool {
    match env {
        Envelope::Unknown { .. } => false,
        Envelope::Frames { result, .. } => result.frames.iter().all(|f| f.kind.is_known()),
        Envelope::Query { query, .. } => query.kinds.iter().all(FrameKind::is_known),
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn encode_then_decode_is_the_identity(env in envelope()) {
        let line = encode_line(&env).expect("encodes");
        prop_assert_eq!(line.last(), Some(&b'\n'));
        prop_assert!(!line[..line.len() - 1].contains(&b'\n'), "literal newline inside the envelope");
        let back = decode_envelope(&line[..line.len() - 1]).expect("decodes");
        prop_assert_eq!(&back, &env);
        if schema_applies(&env) {
            let value: serde_json::Value = serde_json::from_slice(&line).expect("json");
            let errors = schema_errors(&value);
            prop_assert!(errors.is_empty(), "{:?}", errors);
        }
    }
}
