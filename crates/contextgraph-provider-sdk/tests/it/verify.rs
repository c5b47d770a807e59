//! V2: verify is refused unless declared; otherwise every requested identity
//! gets exactly one verdict (missing → unknown, unasked → dropped).

use crate::common::{expect_error, Host, TestProvider};
use contextgraph_provider_sdk::ServeOptions;
use contextgraph_types::{FrameId, FrameVerdict, Verdict, VerifyResponse};
use serde_json::{json, Value};

fn digest(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

fn id(frame: &str, d: char) -> FrameId {
    FrameId::new("verifier", frame, Some(digest(d)))
}

fn verify_line(ids: &[FrameId]) -> String {
    json!({"type": "verify", "request": {"frames": ids}}).to_string()
}

fn verdicts(reply: &Value) -> Vec<(String, String)> {
    assert_eq!(reply["type"], "verified", "{reply}");
    reply["response"]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["frame"]["frame_id"].as_str().unwrap().to_owned(),
                v["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn v2_default_verify_answers_unknown_for_every_identity() {
    let mut host = Host::handshaken(
        TestProvider::new("verifier").verifying(),
        ServeOptions::default(),
    );
    host.send(&verify_line(&[id("a", 'a'), id("b", 'b')]));
    let reply = host.recv();
    assert_eq!(
        verdicts(&reply),
        [
            ("a".into(), "unknown".into()),
            ("b".into(), "unknown".into())
        ]
    );
    // Identities are echoed in full, digest included.
    assert_eq!(
        reply["response"]["verdicts"][0]["frame"],
        json!(id("a", 'a'))
    );
}

#[test]
fn v2_verify_to_a_provider_that_did_not_declare_it_is_bad_request() {
    let provider =
        TestProvider::new("no-verify").on_verify(|_| panic!("verify must not be called"));
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(&verify_line(&[id("a", 'a')]));
    let message = expect_error(&host.recv(), "bad_request");
    assert!(message.contains("re-query"), "{message}");
    assert!(message.contains("V2"), "{message}");
}

#[test]
fn v2_verdicts_are_completed_and_unasked_ones_dropped() {
    let provider = TestProvider::new("verifier")
        .verifying()
        .on_verify(|_| VerifyResponse {
            verdicts: vec![
                FrameVerdict {
                    frame: id("b", 'b'),
                    verdict: Verdict::Valid,
                },
                // Not asked: must not reach the host.
                FrameVerdict {
                    frame: id("zz", 'z'),
                    verdict: Verdict::Valid,
                },
                // Asked identity with another digest: a different identity, not an answer.
                FrameVerdict {
                    frame: id("a", 'f'),
                    verdict: Verdict::Valid,
                },
                FrameVerdict {
                    frame: id("c", 'c'),
                    verdict: Verdict::Stale {
                        replacement_digest: Some(digest('d')),
                    },
                },
                // A second verdict for the same identity: only the first counts.
                FrameVerdict {
                    frame: id("b", 'b'),
                    verdict: Verdict::Gone,
                },
            ],
        });
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(&verify_line(&[
        id("a", 'a'),
        id("b", 'b'),
        id("c", 'c'),
        id("a", 'a'),
    ]));
    let reply = host.recv();
    assert_eq!(
        verdicts(&reply),
        [
            ("a".into(), "unknown".into()),
            ("b".into(), "valid".into()),
            ("c".into(), "stale".into()),
        ]
    );
    assert_eq!(
        reply["response"]["verdicts"][2]["replacement_digest"],
        digest('d')
    );
}

#[test]
fn v4_a_replacement_digest_that_is_not_a_digest_is_withheld() {
    let provider = TestProvider::new("verifier")
        .verifying()
        .on_verify(|r| VerifyResponse {
            verdicts: vec![FrameVerdict {
                frame: r.frames[0].clone(),
                verdict: Verdict::Stale {
                    replacement_digest: Some("the new body text".into()),
                },
            }],
        });
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(&verify_line(&[id("a", 'a')]));
    let message = expect_error(&host.recv(), "internal");
    assert!(message.contains("V4"), "{message}");
}

#[test]
fn v2_correlated_verify_is_served_and_carries_no_id() {
    let mut host = Host::handshaken(
        TestProvider::new("verifier").verifying().correlated(),
        ServeOptions::default(),
    );
    host.send(&verify_line(&[id("a", 'a')]));
    let reply = host.recv();
    assert_eq!(verdicts(&reply), [("a".into(), "unknown".into())]);
    assert!(reply.get("id").is_none());
}

#[test]
fn v2_a_panicking_verify_is_internal_and_the_session_survives() {
    let provider = TestProvider::new("verifier")
        .verifying()
        .on_verify(|_| panic!("verify exploded"));
    let mut host = Host::handshaken(provider, ServeOptions::default());
    host.send(&verify_line(&[id("a", 'a')]));
    let message = expect_error(&host.recv(), "internal");
    assert!(message.contains("verify exploded"), "{message}");
    host.send(&crate::common::query_line(None, "still here", 5, 100));
    assert_eq!(
        crate::common::frame_ids(&host.recv()),
        ["frame-for:still here"]
    );
}

/// Bounded work per request: a verify naming more than
/// `MAX_VERIFY_FRAMES` identities is `bad_request`, never run.
#[test]
fn a_verify_over_the_batch_limit_is_bad_request_with_a_sentence() {
    use contextgraph_types::limits::MAX_VERIFY_FRAMES;
    let provider = TestProvider::new("verifier")
        .verifying()
        .on_verify(|_| panic!("an oversized verify must not be run"));
    let mut host = Host::handshaken(provider, ServeOptions::default());
    let ids: Vec<FrameId> = (0..=MAX_VERIFY_FRAMES)
        .map(|i| id(&format!("f{i}"), 'a'))
        .collect();
    host.send(&verify_line(&ids));
    let message = expect_error(&host.recv(), "bad_request");
    assert!(message.contains("split it into batches"), "{message}");
}
