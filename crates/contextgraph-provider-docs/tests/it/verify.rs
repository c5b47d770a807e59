//! V1–V4 over real pipes: `verify` re-reads the file, re-finds the section by
//! id and re-hashes — `valid` for a matching digest, `stale` with the new
//! digest after an edit, `gone` once the file or section is deleted.

use crate::common::{assert_honest_answer, frames_of, identity, query, start, Session, DOCS_BIN};
use contextgraph_types::ContextQueryResult;

const PROVIDER: &str = "contextgraph-provider-docs";
const POLICY: &str = "docs/retry.md#retry-policy";
const BACKOFF: &str = "docs/retry.md#backoff";

fn ask(session: &mut Session, id: &str) -> ContextQueryResult {
    let q = query("retry policy backoff", 10, 8000);
    let result = frames_of(&session.query(id, &q), id);
    assert_honest_answer(&result, &q);
    result
}

fn digest_of(result: &ContextQueryResult, frame_id: &str) -> String {
    result
        .frames
        .iter()
        .find(|f| f.id == frame_id)
        .and_then(|f| f.content_digest.clone())
        .unwrap_or_else(|| panic!("{frame_id} not served: {result:?}"))
}

#[test]
fn v1_v4_valid_then_stale_with_replacement_digest_then_gone() {
    let (dir, mut session) = start(DOCS_BIN, &[]);
    let first = ask(&mut session, "q1");
    let policy = digest_of(&first, POLICY);
    let backoff = digest_of(&first, BACKOFF);
    let held = [
        identity(PROVIDER, POLICY, Some(&policy)),
        identity(PROVIDER, BACKOFF, Some(&backoff)),
    ];

    let verdicts = session.verify(&held);
    assert_eq!(verdicts.len(), 2);
    for (verdict, asked) in verdicts.iter().zip(&held) {
        assert_eq!(
            &verdict["frame"], asked,
            "verdicts echo the identity in full"
        );
        assert_eq!(verdict["status"], "valid", "{verdict}");
        assert!(verdict.get("replacement_digest").is_none());
    }

    // Edit only the policy section, keeping its line count: the backoff
    // section's bytes are untouched and must stay valid.
    let path = dir.path().join("docs/retry.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("bounds the tries", "caps the tries")).unwrap();
    let verdicts = session.verify(&held);
    assert_eq!(verdicts[0]["status"], "stale", "{verdicts:?}");
    assert_eq!(verdicts[1]["status"], "valid", "{verdicts:?}");
    let second = ask(&mut session, "q2");
    let replacement = verdicts[0]["replacement_digest"]
        .as_str()
        .expect("V4: stale carries the new digest");
    assert_eq!(
        replacement,
        digest_of(&second, POLICY),
        "the replacement is what is served now"
    );
    assert_ne!(replacement, policy);
    assert!(
        verdicts[0].get("content").is_none() && verdicts[0].get("frames").is_none(),
        "V4: no bodies"
    );

    std::fs::remove_file(&path).unwrap();
    let verdicts = session.verify(&held);
    for verdict in &verdicts {
        assert_eq!(verdict["status"], "gone", "{verdict}");
    }
}

#[test]
fn v1_a_removed_section_is_gone_while_its_file_remains() {
    let (dir, mut session) = start(DOCS_BIN, &[]);
    let first = ask(&mut session, "q1");
    let backoff = digest_of(&first, BACKOFF);
    let path = dir.path().join("docs/retry.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let cut = text.find("## Backoff").unwrap();
    std::fs::write(&path, &text[..cut]).unwrap();
    let verdicts = session.verify(&[identity(PROVIDER, BACKOFF, Some(&backoff))]);
    assert_eq!(verdicts[0]["status"], "gone", "{verdicts:?}");
}

#[test]
fn v2_identities_this_provider_cannot_vouch_for_are_unknown_or_gone_never_valid() {
    let (_dir, mut session) = start(DOCS_BIN, &[]);
    let first = ask(&mut session, "q1");
    let policy = digest_of(&first, POLICY);
    let verdicts = session.verify(&[
        // Ours but digest-less: nothing to compare (V1), so no `valid`.
        identity(PROVIDER, POLICY, None),
        // A section this file never had, and a path that escapes the root.
        identity(PROVIDER, "docs/retry.md#no-such-heading", Some(&policy)),
        identity(PROVIDER, "../outside.md#top", Some(&policy)),
        // A decoy the walk never serves.
        identity(PROVIDER, ".hidden/secret.md#retry-secret", Some(&policy)),
    ]);
    let statuses: Vec<&str> = verdicts
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["unknown", "gone", "gone", "gone"]);
}

/// `provider_id` is the host's label for this provider (a `cgp.toml` table
/// name, another implementation's routing key), which the provider cannot
/// know: verify judges by frame id and digest and echoes the label back.
#[test]
fn v2_a_host_key_in_provider_id_is_verified_by_frame_id_and_digest() {
    let (dir, mut session) = start(DOCS_BIN, &[]);
    let first = ask(&mut session, "q1");
    let policy = digest_of(&first, POLICY);
    let backoff = digest_of(&first, BACKOFF);
    let held = [
        identity("team-docs", POLICY, Some(&policy)),
        identity("host-key/7", BACKOFF, Some(&backoff)),
    ];
    let verdicts = session.verify(&held);
    for (verdict, asked) in verdicts.iter().zip(&held) {
        assert_eq!(&verdict["frame"], asked, "the host's label is echoed");
        assert_eq!(verdict["status"], "valid", "{verdict}");
    }

    let path = dir.path().join("docs/retry.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("bounds the tries", "caps the tries")).unwrap();
    let verdicts = session.verify(&held);
    assert_eq!(verdicts[0]["status"], "stale", "{verdicts:?}");
    assert_eq!(verdicts[0]["frame"]["provider_id"], "team-docs");
    assert_eq!(verdicts[1]["status"], "valid", "{verdicts:?}");

    std::fs::remove_file(&path).unwrap();
    let verdicts = session.verify(&held);
    for verdict in &verdicts {
        assert_eq!(verdict["status"], "gone", "{verdict}");
    }
}
