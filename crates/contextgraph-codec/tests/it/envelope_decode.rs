//! Envelope decoding: unknown types are values, bad lines are typed errors
//! for that line only, unknown members are ignored, and encoding never
//! emits a literal newline inside an envelope.

use contextgraph_codec::{decode_envelope, encode_line, DecodeError, Envelope};
use contextgraph_testkit::assert_line_schema_valid;
use contextgraph_types::{ContextFrame, ContextQuery, ContextQueryResult, ErrorCode, FrameKind};

fn decode(text: &str) -> Result<Envelope, DecodeError> {
    decode_envelope(text.as_bytes())
}

#[test]
fn an_unknown_type_decodes_to_a_distinguishable_value_with_its_id() {
    let env = decode(r#"{"type":"subscribe","id":"s1","topic":{"deep":[1]}}"#).unwrap();
    assert_eq!(
        env,
        Envelope::Unknown {
            type_name: "subscribe".into(),
            id: Some("s1".into())
        }
    );
    let note = decode(r#"{"topic":"x","type":"ping"}"#).unwrap();
    assert_eq!(
        note,
        Envelope::Unknown {
            type_name: "ping".into(),
            id: None
        }
    );
    // A non-string id on an unknown type is still an unknown type, without id.
    let odd = decode(r#"{"type":"ping","id":7}"#).unwrap();
    assert_eq!(
        odd,
        Envelope::Unknown {
            type_name: "ping".into(),
            id: None
        }
    );
}

#[test]
fn members_may_come_in_any_order() {
    let env =
        decode(r#"{"query":{"goal":"g","max_frames":1,"max_tokens":2},"id":"q9","type":"query"}"#)
            .unwrap();
    assert_eq!(
        env,
        Envelope::Query {
            id: Some("q9".into()),
            query: ContextQuery::new("g", 1, 2)
        }
    );
}

#[test]
fn u1_unknown_and_irrelevant_members_are_ignored_even_when_malformed() {
    let env = decode(r#"{"type":"shutdown","reason":{"x":1},"query":"not a query"}"#).unwrap();
    assert_eq!(env, Envelope::Shutdown);
    // `query` is irrelevant to `frames`; malformed and before the tag, it still cannot fail the message.
    let env =
        decode(r#"{"query":42,"type":"frames","result":{"frames":[],"truncated":false}}"#).unwrap();
    assert!(matches!(env, Envelope::Frames { .. }));
    let env = decode(
        r#"{"jsonrpc":"2.0","type":"handshake","protocol_version":"contextgraph/1.0-draft"}"#,
    )
    .unwrap();
    assert_eq!(env, Envelope::handshake());
}

#[test]
fn u2_a_frame_of_unknown_kind_keeps_the_rest_of_the_frames_message_readable() {
    let line = r#"{"type":"frames","id":"q1","result":{"frames":[
        {"id":"a","kind":"hologram","title":"t","score":0.1,"token_cost":0},
        {"id":"b","kind":"doc","title":"t","content":"abcd","score":0.9,"token_cost":1}],"truncated":false}}"#
        .replace('\n', "");
    let Envelope::Frames { result, .. } = decode(&line).unwrap() else {
        panic!("frames")
    };
    assert_eq!(result.frames[0].kind, FrameKind::Other("hologram".into()));
    assert_eq!(result.frames[1].kind, FrameKind::Doc);
}

#[test]
fn legacy_capability_members_parse_and_are_ignored() {
    let line = r#"{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft",
        "provider":{"name":"old","version":"0.0.1","data_flow":{"reads":true,"writes":false,"egress":false}},
        "capabilities":{"query":{"kinds":["doc"],"filters":["lang"]},"upsert":true,"subscribe":true}}"#
        .replace('\n', "");
    let Envelope::HandshakeAck { capabilities, .. } = decode(&line).unwrap() else {
        panic!("ack")
    };
    assert_eq!(capabilities.query.kinds, vec![FrameKind::Doc]);
}

#[test]
fn bad_lines_are_typed_errors() {
    assert!(matches!(
        decode_envelope(b"{\"type\":\"shut\xffdown\"}"),
        Err(DecodeError::InvalidUtf8 { valid_up_to: 13 })
    ));
    assert!(matches!(
        decode("this is not json {{{"),
        Err(DecodeError::InvalidJson { .. })
    ));
    assert!(matches!(
        decode(r#"{"type":"query","query":{"goal":"#),
        Err(DecodeError::InvalidJson { .. })
    ));
    assert!(matches!(decode("[1,2,3]"), Err(DecodeError::NotAnObject)));
    assert!(matches!(
        decode("\"shutdown\""),
        Err(DecodeError::NotAnObject)
    ));
    assert_eq!(
        decode(r#"{"id":"q3","query":{}}"#),
        Err(DecodeError::MissingType {
            id: Some("q3".into())
        })
    );
    assert!(matches!(
        decode(r#"{"type":7}"#),
        Err(DecodeError::MissingType { id: None })
    ));
    assert!(matches!(
        decode(r#"{"type":"shutdown"} trailing"#),
        Err(DecodeError::InvalidJson { .. })
    ));
}

#[test]
fn a_malformed_known_envelope_keeps_its_id_for_the_bad_request_reply() {
    let err = decode(
        r#"{"type":"query","id":"q7","query":{"goal":"g","max_frames":"five","max_tokens":1}}"#,
    )
    .unwrap_err();
    assert_eq!(err.id(), Some("q7"));
    let DecodeError::Malformed {
        type_name, reason, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(type_name, "query");
    assert!(reason.contains("invalid type"), "{reason}");
    assert!(err.to_string().starts_with("malformed query envelope"));

    let err = decode(r#"{"type":"error","id":"q8"}"#).unwrap_err();
    assert!(
        matches!(&err, DecodeError::Malformed { reason, .. } if reason.contains("message")),
        "{err:?}"
    );
    let err = decode(r#"{"type":"handshake"}"#).unwrap_err();
    assert!(matches!(err, DecodeError::Malformed { .. }));
}

#[test]
fn duplicate_members_are_rejected_not_silently_merged() {
    assert!(decode(r#"{"type":"shutdown","type":"query"}"#).is_err());
    assert!(decode(
        r#"{"type":"query","id":"a","id":"b","query":{"goal":"g","max_frames":1,"max_tokens":1}}"#
    )
    .is_err());
}

#[test]
fn error_codes_x1_x2_unknown_and_absent_act_as_internal_but_round_trip() {
    let env = decode(r#"{"type":"error","code":"acme:overheated","message":"hot"}"#).unwrap();
    assert_eq!(env.effective_error_code(), Some(ErrorCode::Internal));
    let line = encode_line(&env).unwrap();
    assert!(String::from_utf8(line)
        .unwrap()
        .contains("\"code\":\"acme:overheated\""));
    let env = decode(r#"{"type":"error","message":"no code"}"#).unwrap();
    assert_eq!(env.effective_error_code(), Some(ErrorCode::Internal));
    let env = decode(r#"{"type":"error","message":"m","code":"unavailable","id":"q2"}"#).unwrap();
    assert_eq!(env.effective_error_code(), Some(ErrorCode::Unavailable));
    assert_eq!(env.correlation_id(), Some("q2"));
}

#[test]
fn encoding_never_emits_a_literal_newline_inside_an_envelope() {
    let nasty = "line one\nline two\r\n\u{2028}\u{2029}\u{0085}\t\"quoted\" \\ end\n";
    let frame = ContextFrame::new("a\nb", FrameKind::Doc, "title\nwith newline", nasty);
    let env = Envelope::Frames {
        id: Some("q\n1".into()),
        result: ContextQueryResult {
            frames: vec![frame],
            truncated: false,
            dropped_estimate: None,
        },
    };
    let line = encode_line(&env).unwrap();
    assert_eq!(line.last(), Some(&b'\n'));
    assert!(!line[..line.len() - 1].contains(&b'\n'));
    assert!(!line.contains(&b'\r'));
    assert_line_schema_valid(&line);
    assert_eq!(decode_envelope(&line).unwrap(), env);
}

#[test]
fn absent_ids_and_codes_are_omitted_never_null() {
    let line = encode_line(&Envelope::Error {
        id: None,
        code: None,
        message: "m".into(),
    })
    .unwrap();
    assert_eq!(line, b"{\"type\":\"error\",\"message\":\"m\"}\n");
    let line = encode_line(&Envelope::Shutdown).unwrap();
    assert_eq!(line, b"{\"type\":\"shutdown\"}\n");
    let line = encode_line(&Envelope::Query {
        id: None,
        query: ContextQuery::new("g", 1, 2),
    })
    .unwrap();
    assert_eq!(
        line,
        b"{\"type\":\"query\",\"query\":{\"goal\":\"g\",\"max_frames\":1,\"max_tokens\":2}}\n"
    );
}
