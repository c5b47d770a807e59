//! Verify misbehaviours: `rubber-stamp-verify` (V1) and `hollow-verify` (V2).

use crate::common;

use common::{identity, roomy_answer, verdicts_of};

#[test]
fn v1_rubber_stamp_verify_answers_valid_for_mutated_and_unknown_identities() {
    let (mut p, result) = roomy_answer("rubber-stamp-verify");
    let frame = &result.frames[0];
    let mutated = format!("sha256:{}", "0".repeat(64));
    let verdicts = verdicts_of(&p.verify(&[
        identity(&frame.id, Some(&mutated)),
        identity("no/such/frame#L1-2", Some(&mutated)),
    ]));
    assert_eq!(verdicts.len(), 2);
    assert!(
        verdicts.iter().all(|v| v["status"] == "valid"),
        "{verdicts:?}"
    );
}

#[test]
fn v2_hollow_verify_declares_verify_and_answers_no_verdicts() {
    let mut p = common::Provider::mode("hollow-verify", &[]);
    let ack = p.handshake();
    assert_eq!(ack["capabilities"]["verify"], true);
    let reply = p.query("q", &common::roomy_query());
    let result = common::frames_of(&reply, "q");
    let frame = &result.frames[0];
    let verdicts = verdicts_of(&p.verify(&[identity(&frame.id, frame.content_digest.as_deref())]));
    assert!(verdicts.is_empty(), "{verdicts:?}");
}
