//! `normal`: verify is honest (V1–V4): `valid` only for the digest served
//! now, `stale` with the current digest otherwise, `gone` for unknown ids;
//! judged by frame id and digest, whatever host label `provider_id` carries.

use crate::common;

use common::{file_of, frames_of, identity, roomy_answer, roomy_query, verdicts_of, Provider};
use serde_json::json;

#[test]
fn v1_v4_verdicts_compare_the_presented_digest_with_the_current_one() {
    let mut p = Provider::spawn(&[]);
    p.handshake();
    let result = frames_of(&p.query("q", &roomy_query()), "q");
    let frame = &result.frames[0];
    let digest = frame.content_digest.as_deref().unwrap();
    let mutated = format!("sha256:{}", "0".repeat(64));
    let reply = p.verify(&[
        identity(&frame.id, Some(digest)),
        identity(&frame.id, Some(&mutated)),
        identity("no/such/frame#L1-2", Some(digest)),
        // A host's own label for this provider: judged by frame id and digest.
        json!({"provider_id": "a-host-key", "frame_id": frame.id, "content_digest": digest}),
    ]);
    contextgraph_testkit::assert_schema_valid(&reply);
    let verdicts = verdicts_of(&reply);
    let status: Vec<_> = verdicts
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["valid", "stale", "gone", "valid"]);
    assert_eq!(verdicts[3]["frame"]["provider_id"], "a-host-key", "echoed");
    assert_eq!(
        verdicts[1]["replacement_digest"], digest,
        "V4: a digest, never a body"
    );
    assert_eq!(verdicts[1]["frame"]["content_digest"], mutated.as_str());
    for v in &verdicts {
        assert!(v.get("content").is_none(), "V4: no bodies");
    }
}

#[test]
fn v1_a_frame_changed_on_disk_verifies_stale() {
    let (mut p, result) = roomy_answer("normal");
    let frame = result
        .frames
        .iter()
        .find(|f| {
            f.file_provenance()
                .any(|p| p.range.as_deref().is_some_and(|r| r.starts_with("L1-")))
        })
        .unwrap();
    let path = file_of(frame);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.insert_str(0, "edited ");
    std::fs::write(&path, text).unwrap();
    let verdicts = verdicts_of(&p.verify(&[identity(&frame.id, frame.content_digest.as_deref())]));
    assert_eq!(verdicts[0]["status"], "stale", "{verdicts:?}");
    assert_ne!(
        verdicts[0]["replacement_digest"],
        json!(frame.content_digest)
    );
}
