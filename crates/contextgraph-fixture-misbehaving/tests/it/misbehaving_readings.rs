//! The modes that take a reading the protocol's text leaves open (or that
//! this project reads permissively), on the wire: `ack-own-version` (H1/H3),
//! `own-name-verify` (V2's `provider_id`), `anchored-low-score` (G4's
//! "ranked first" as list order).

use crate::common;

use common::{frames_of, identity, roomy_answer, verdicts_of, Provider};
use contextgraph_fixture_misbehaving::is_anchored;
use contextgraph_types::PROTOCOL_VERSION;
use serde_json::json;

#[test]
fn h1_h3_ack_own_version_acknowledges_a_foreign_host_in_its_own_version() {
    let mut p = Provider::mode("ack-own-version", &[]);
    p.send(&json!({"type": "handshake", "protocol_version": "contextgraph/2.0"}));
    let ack = p.recv();
    assert_eq!(ack["type"], "handshake_ack", "{ack}");
    assert_eq!(ack["protocol_version"], PROTOCOL_VERSION);
}

#[test]
fn v2_own_name_verify_answers_unknown_under_a_host_label() {
    let (mut p, result) = roomy_answer("own-name-verify");
    let frame = &result.frames[0];
    let digest = frame.content_digest.as_deref();
    let mut host_key = identity(&frame.id, digest);
    host_key["provider_id"] = json!("a-host-key");
    let verdicts = verdicts_of(&p.verify(&[identity(&frame.id, digest), host_key]));
    assert_eq!(verdicts[0]["status"], "valid", "{verdicts:?}");
    assert_eq!(verdicts[1]["status"], "unknown", "{verdicts:?}");
}

#[test]
fn g4_anchored_low_score_lists_anchored_frames_first_with_lower_scores() {
    let (mut p, roomy) = roomy_answer("anchored-low-score");
    let anchor = roomy
        .frames
        .iter()
        .find_map(|f| f.relations.first().map(|r| r.target_uri.clone()))
        .expect("a graph frame with a relation");
    let mut query = common::roomy_query();
    query["anchors"] = json!([anchor]);
    let result = frames_of(&p.query("q2", &query), "q2");
    let anchors = [anchor];
    let flags: Vec<bool> = result
        .frames
        .iter()
        .map(|f| is_anchored(f, &anchors))
        .collect();
    let first_out = flags.iter().position(|a| !a).expect("an unanchored frame");
    assert!(first_out > 0, "an anchored frame comes first: {flags:?}");
    assert!(
        flags[first_out..].iter().all(|a| !a),
        "anchored frames first: {flags:?}"
    );
    let top_anchored = result.frames[..first_out]
        .iter()
        .map(|f| f.score)
        .fold(0.0, f32::max);
    let low_unanchored = result.frames[first_out..]
        .iter()
        .map(|f| f.score)
        .fold(1.0, f32::min);
    assert!(top_anchored < low_unanchored, "{result:?}");
    assert!(common::violations(&result, &query).is_empty());
}
