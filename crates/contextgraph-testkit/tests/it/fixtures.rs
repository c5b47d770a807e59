//! The project's own fixtures validate against the project's own schema, and
//! that schema rejects what the protocol forbids (so a "validates" assertion
//! made through the testkit is never empty).

use contextgraph_testkit::{envelope_schema, fixtures, interop, schema_errors};
use serde_json::{json, Value};

fn own_schema_errors(envelope: &Value) -> Vec<String> {
    envelope_schema()
        .iter_errors(envelope)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn every_fixture_envelope_validates_against_our_schema() {
    let lines = fixtures::transcript_lines();
    assert_eq!(lines.len(), 7);
    for line in &lines {
        let value: Value = serde_json::from_str(line).expect("one JSON envelope per line");
        assert_eq!(own_schema_errors(&value), Vec::<String>::new(), "{line}");
    }
    let messages = fixtures::reference_messages();
    assert_eq!(messages.len(), 12);
    for message in &messages {
        assert_eq!(
            own_schema_errors(message),
            Vec::<String>::new(),
            "{message}"
        );
    }
}

#[test]
fn the_transcript_is_the_first_seven_reference_messages() {
    let lines: Vec<Value> = fixtures::transcript_lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[..], fixtures::reference_messages()[..7]);
}

#[test]
fn our_schema_rejects_what_the_protocol_forbids() {
    let frame = json!({"id": "a", "kind": "doc", "title": "t", "score": 0.5, "token_cost": 0});
    let frames =
        |f: Value| json!({"type": "frames", "result": {"truncated": false, "frames": [f]}});
    assert!(own_schema_errors(&frames(frame.clone())).is_empty());
    let mut broken = Vec::new();
    for (member, value) in [
        ("score", json!(1.5)),
        ("kind", json!("hologram")),
        ("title", json!("")),
        ("token_cost", json!(-1)),
        ("recorded_at", json!("2026-01-01T00:00:00+01:00")),
        ("not_a_member", json!(true)),
    ] {
        let mut f = frame.clone();
        f[member] = value;
        broken.push(frames(f));
    }
    broken.push(json!({"type": "handshake", "protocol_version": "contextgraph/one"}));
    broken.push(json!({"type": "handshake_ack", "protocol_version": "contextgraph/1.0-draft",
        "provider": {"name": "", "version": "1", "data_flow": {"reads": true, "writes": false, "egress": false}},
        "capabilities": {"query": {"kinds": ["doc"]}}}));
    broken.push(json!({"type": "error", "code": "internal"}));
    broken.push(json!({"type": "verified", "response": {"verdicts": [
        {"frame": {"provider_id": "p", "frame_id": "f"}, "status": "fine"}]}}));
    broken.push(json!({"type": "query", "id": "", "query": {"goal": "g", "max_frames": 1, "max_tokens": 1}}));
    for envelope in &broken {
        assert!(
            !own_schema_errors(envelope).is_empty(),
            "accepted {envelope}"
        );
        assert!(!schema_errors(envelope).is_empty(), "accepted {envelope}");
    }
}

/// Interop: our schema accepts the shared data other implementations wrote.
#[test]
fn our_schema_accepts_the_shared_wire_data() {
    let (Some(lines), Some(messages)) =
        (interop::transcript_lines(), interop::reference_messages())
    else {
        return;
    };
    for line in &lines {
        let value: Value = serde_json::from_str(line).expect("one JSON envelope per line");
        assert_eq!(own_schema_errors(&value), Vec::<String>::new(), "{line}");
    }
    for message in &messages {
        assert_eq!(
            own_schema_errors(message),
            Vec::<String>::new(),
            "{message}"
        );
    }
}
