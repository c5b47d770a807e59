//! Wire data parses, and re-serializes to the same JSON value once members
//! the protocol omits are removed from both sides; the originals and our
//! re-encodings validate against the envelope schema. Run on the project's
//! own fixtures always, and on the shared data (a full session transcript and
//! the reference messages, written by another implementation) when
//! `../shared/wire` is present.

use contextgraph_codec::{decode_envelope, encode_line, Envelope};
use contextgraph_testkit::{assert_schema_valid, fixtures, interop};
use serde_json::Value;

/// Members the protocol omits when empty.
const OMITTED_WHEN_EMPTY: [&str; 7] = [
    "egress_scopes",
    "representations",
    "kinds",
    "anchors",
    "representation_preferences",
    "provenance",
    "relations",
];

/// Capability flags that default to false: an absent flag and `false` mean the same.
const DEFAULT_FALSE_FLAGS: [&str; 4] = ["correlation", "graph", "verify", "resolve"];

/// Remove what the protocol says is equivalent to absence: `null`, the empty
/// lists above, `representation: "full"`, and false capability flags.
fn normalize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, v| {
                !(v.is_null()
                    || (OMITTED_WHEN_EMPTY.contains(&key.as_str())
                        && v.as_array().is_some_and(Vec::is_empty))
                    || (key == "representation" && v == "full")
                    || (DEFAULT_FALSE_FLAGS.contains(&key.as_str()) && v == &Value::Bool(false)))
            });
            map.values_mut().for_each(normalize);
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn round_trip(original: &str) -> (Envelope, Value, Value) {
    let env = decode_envelope(original.as_bytes())
        .unwrap_or_else(|e| panic!("does not decode: {e}\n{original}"));
    assert!(
        !matches!(env, Envelope::Unknown { .. }),
        "decoded as unknown: {original}"
    );
    let line = encode_line(&env).expect("encodes");
    assert_eq!(
        line.iter().filter(|b| **b == b'\n').count(),
        1,
        "exactly one newline, at the end"
    );
    let mut ours: Value = serde_json::from_slice(&line).expect("our line is JSON");
    let mut theirs: Value = serde_json::from_str(original).expect("original is JSON");
    assert_schema_valid(&theirs);
    assert_schema_valid(&ours);
    normalize(&mut ours);
    normalize(&mut theirs);
    (env, ours, theirs)
}

/// The envelope types of a whole session, in order.
const SESSION_TYPES: [&str; 7] = [
    "handshake",
    "handshake_ack",
    "query",
    "frames",
    "verify",
    "verified",
    "shutdown",
];

fn round_trips_to_the_same_values(lines: &[String]) -> Vec<String> {
    let mut kinds = Vec::new();
    for line in lines {
        let (env, ours, theirs) = round_trip(line);
        assert_eq!(ours, theirs, "re-serialization differs for {line}");
        kinds.push(env.type_name().to_owned());
    }
    kinds
}

#[test]
fn every_line_of_our_transcript_parses_and_reserializes_to_the_same_value() {
    let lines = fixtures::transcript_lines();
    assert_eq!(lines.len(), 7, "the transcript is a whole session");
    assert_eq!(round_trips_to_the_same_values(&lines), SESSION_TYPES);
}

#[test]
fn every_one_of_our_reference_messages_parses_and_reserializes_to_the_same_value() {
    let messages = fixtures::reference_messages();
    assert_eq!(messages.len(), 12);
    let lines: Vec<String> = messages.iter().map(Value::to_string).collect();
    let kinds = round_trips_to_the_same_values(&lines);
    // Every envelope type of the vocabulary is represented.
    for t in SESSION_TYPES.iter().chain(&["error"]) {
        assert!(kinds.iter().any(|k| k == t), "no {t} among {kinds:?}");
    }
}

#[test]
fn our_transcript_carries_what_a_host_relies_on() {
    let lines = fixtures::transcript_lines();
    let Envelope::HandshakeAck { capabilities, .. } = decode_envelope(lines[1].as_bytes()).unwrap()
    else {
        panic!("line 2 is the ack");
    };
    assert!(capabilities.correlation && capabilities.verify && capabilities.graph);
    let Envelope::Frames { id, result } = decode_envelope(lines[3].as_bytes()).unwrap() else {
        panic!("line 4 is frames");
    };
    assert_eq!(id.as_deref(), Some("q-7"), "id after result is still read");
    assert_eq!(result.frames.len(), 2);
    assert_eq!(result.frames[0].provenance[0].kind, "file");
    // Our fixture is honest about cost (B3).
    assert!(result.frames.iter().all(|f| f.has_honest_token_cost()));
}

#[test]
fn every_transcript_line_parses_and_reserializes_to_the_same_value() {
    let Some(lines) = interop::transcript_lines() else {
        return;
    };
    assert_eq!(lines.len(), 7, "the transcript is a whole session");
    let mut kinds = Vec::new();
    for line in &lines {
        let (env, ours, theirs) = round_trip(line);
        assert_eq!(ours, theirs, "re-serialization differs for {line}");
        kinds.push(env.type_name().to_owned());
    }
    assert_eq!(
        kinds,
        [
            "handshake",
            "handshake_ack",
            "query",
            "frames",
            "verify",
            "verified",
            "shutdown"
        ]
    );
}

#[test]
fn every_reference_message_parses_and_reserializes_to_the_same_value() {
    let Some(messages) = interop::reference_messages() else {
        return;
    };
    assert_eq!(messages.len(), 12);
    for message in &messages {
        let text = serde_json::to_string(message).unwrap();
        let (_, ours, theirs) = round_trip(&text);
        assert_eq!(ours, theirs, "re-serialization differs for {text}");
    }
}

#[test]
fn the_transcript_carries_what_a_host_relies_on() {
    let Some(lines) = interop::transcript_lines() else {
        return;
    };
    let Envelope::HandshakeAck {
        provider,
        capabilities,
        ..
    } = decode_envelope(lines[1].as_bytes()).unwrap()
    else {
        panic!("line 2 is the ack");
    };
    assert_eq!(provider.name, "repo-graph");
    assert!(capabilities.correlation && capabilities.verify && capabilities.graph);
    assert_eq!(
        capabilities.embeddings_fingerprint, None,
        "null fingerprint accepted as absent"
    );
    let Envelope::Frames { id, result } = decode_envelope(lines[3].as_bytes()).unwrap() else {
        panic!("line 4 is frames");
    };
    assert_eq!(id.as_deref(), Some("q1"), "id after result is still read");
    assert_eq!(result.frames.len(), 2);
    assert_eq!(result.frames[0].provenance[0].kind, "file");
    // The transcript's frames are honest about cost (B3).
    assert!(result.frames.iter().all(|f| f.has_honest_token_cost()));
}
