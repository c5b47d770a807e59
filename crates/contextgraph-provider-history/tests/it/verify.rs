//! `verify`: valid while the commit is reachable, gone after a rewrite.

use contextgraph_provider_sdk::Provider;
use contextgraph_types::{FrameId, Verdict, VerifyRequest};

use crate::repo::{ask, story, TestRepo};

fn identity(f: &contextgraph_types::ContextFrame) -> FrameId {
    FrameId {
        provider_id: "history".into(),
        frame_id: f.id.clone(),
        content_digest: f.content_digest.clone(),
    }
}

fn verdicts(p: &contextgraph_provider_history::HistoryProvider, ids: Vec<FrameId>) -> Vec<Verdict> {
    p.verify(&VerifyRequest { frames: ids })
        .verdicts
        .into_iter()
        .map(|v| v.verdict)
        .collect()
}

#[test]
fn served_frames_verify_valid_then_gone_after_a_history_rewrite() {
    let r = TestRepo::new();
    let s = story(&r);
    let p = r.open();
    let newest = ask(&p, "document retry loop")
        .into_iter()
        .find(|f| f.id.starts_with(&s.document_retry.to_string()))
        .expect("the newest commit");
    let older = ask(&p, "net backoff overflow")
        .into_iter()
        .next()
        .expect("the fix");
    assert!(older.id.starts_with(&s.fix_backoff.to_string()));
    assert_eq!(
        verdicts(&p, vec![identity(&newest), identity(&older)]),
        vec![Verdict::Valid, Verdict::Valid]
    );
    // A changed digest is stale, with the digest served now.
    let mut tampered = identity(&older);
    tampered.content_digest = Some(contextgraph_types::sha256::sha256_digest(b"other"));
    assert_eq!(
        verdicts(&p, vec![tampered]),
        vec![Verdict::Stale {
            replacement_digest: older.content_digest.clone()
        }]
    );
    // Rewrite: drop the newest commit. Its object may linger, but it is no
    // longer reachable from HEAD.
    r.reset_hard(s.remove_credentials);
    assert_eq!(
        verdicts(&p, vec![identity(&newest), identity(&older)]),
        vec![Verdict::Gone, Verdict::Valid]
    );
    // An id that is not one of ours is gone, not an error.
    let mut foreign = identity(&older);
    foreign.frame_id = "src/net.rs#retry_loop".into();
    assert_eq!(verdicts(&p, vec![foreign]), vec![Verdict::Gone]);
}

#[test]
fn a_commit_past_the_index_cap_verifies_by_the_commit_graph() {
    let r = TestRepo::new();
    let s = story(&r);
    let full = r.open();
    let old = ask(&full, "parse config toml")
        .into_iter()
        .find(|f| f.id.starts_with(&s.parse_config.to_string()))
        .expect("the config commit");
    // An index holding only the newest three commits (a separate cache).
    let cache = tempfile::tempdir().expect("temp");
    let capped = contextgraph_provider_history::HistoryProvider::open(
        r.dir.path(),
        contextgraph_provider_history::HistoryOptions {
            cache: contextgraph_search::CacheLocation::Base(cache.path().to_path_buf()),
            max_commits: 3,
            ..contextgraph_provider_history::HistoryOptions::default()
        },
    )
    .expect("open");
    assert_eq!(capped.commits(), 3);
    assert!(capped
        .notes()
        .iter()
        .any(|n| n.contains("only the newest 3 commits")));
    assert!(ask(&capped, "parse config toml")
        .iter()
        .all(|f| !f.id.starts_with(&s.parse_config.to_string())));
    assert_eq!(
        verdicts(&capped, vec![identity(&old)]),
        vec![Verdict::Valid]
    );
}
