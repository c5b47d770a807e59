//! Episode frames: one per commit, exact provenance, stable ids, renames
//! and deletions named.

use contextgraph_provider_history::render::lines_bytes;
use contextgraph_provider_sdk::Provider;
use contextgraph_types::sha256::sha256_digest;
use contextgraph_types::{ContextQuery, FrameKind, Timestamp};

use crate::repo::{ask, ask_raw, story, TestRepo, DAY, NET_V2, T0};

#[test]
fn a_commit_is_an_episode_with_its_message_time_and_provenance() {
    let r = TestRepo::new();
    let s = story(&r);
    let p = r.open();
    let frames = ask(&p, "backoff overflow");
    let top = frames.first().expect("a frame");
    let id = s.fix_backoff.to_string();
    assert_eq!(top.kind, FrameKind::Episode);
    // The goal names no path, so the frame is the commit alone.
    assert_eq!(top.id, id);
    let content = top.content.as_deref().expect("content");
    assert!(
        content.contains("Fix backoff overflow in the retry loop"),
        "{content}"
    );
    assert!(content.contains("  M src/net.rs"), "{content}");
    assert_eq!(
        top.valid_from,
        Some(Timestamp::from_unix(T0 + 2 * DAY, 0).to_string())
    );
    assert_eq!(top.valid_from.as_deref(), Some("2024-01-03T00:00:00Z"));
    assert_eq!(
        top.provenance[0].uri.as_deref(),
        Some(format!("git:{id}").as_str())
    );
    assert_eq!(top.provenance[0].kind, "git");
    assert!(top
        .citation_label
        .as_deref()
        .is_some_and(|l| l.starts_with(&id[..12])));
}

#[test]
fn a_hunk_names_commit_path_and_lines_with_the_digest_of_those_lines() {
    let r = TestRepo::new();
    let s = story(&r);
    let p = r.open();
    // `net` names the path: the frame shows that file's hunks.
    let frames = ask(&p, "net backoff overflow");
    let top = frames.first().expect("a frame");
    let id = s.fix_backoff.to_string();
    assert_eq!(top.id, format!("{id}:src/net.rs"));
    let content = top.content.as_deref().expect("content");
    assert!(content.contains("-        delay = delay * 2;"), "{content}");
    assert!(
        content.contains("+        delay = delay.saturating_mul(2).min(60);"),
        "{content}"
    );
    let hunk = &top.provenance[1];
    assert_eq!(
        hunk.uri.as_deref(),
        Some(format!("git:{id}:src/net.rs").as_str())
    );
    // `git show <id>:src/net.rs | sed -n 2,8p` is what the digest covers.
    assert_eq!(hunk.range.as_deref(), Some("L2-8"));
    let expected = lines_bytes(NET_V2.as_bytes(), 2, 8).expect("lines");
    assert_eq!(
        hunk.digest.as_deref(),
        Some(sha256_digest(expected).as_str())
    );
    assert_eq!(
        hunk.method.as_deref(),
        Some(format!("git show {id}:src/net.rs").as_str())
    );
    // The frame relates to the file as it is in the working tree now.
    assert!(top
        .relations
        .iter()
        .any(|rel| rel.target_uri.ends_with("/src/net.rs")
            && rel.display_name.as_deref() == Some("src/net.rs")));
}

#[test]
fn frame_ids_and_contents_are_stable_across_runs() {
    let r = TestRepo::new();
    story(&r);
    let first = ask(&r.open(), "retry loop");
    // A second provider loads the persisted index instead of building it.
    let again = r.open();
    assert_eq!(again.last_build().commits_read, 0);
    let second = ask(&again, "retry loop");
    let key = |f: &contextgraph_types::ContextFrame| (f.id.clone(), f.content_digest.clone());
    assert!(!first.is_empty());
    assert_eq!(
        first.iter().map(key).collect::<Vec<_>>(),
        second.iter().map(key).collect::<Vec<_>>()
    );
}

#[test]
fn renames_and_deletions_are_named() {
    let r = TestRepo::new();
    let s = story(&r);
    let p = r.open();
    let renamed = ask(&p, "rename config settings");
    let f = renamed
        .iter()
        .find(|f| f.id.starts_with(&s.rename_config.to_string()))
        .expect("the rename commit");
    let content = f.content.as_deref().expect("content");
    assert!(
        content.contains("R src/config.rs -> src/settings.rs"),
        "{content}"
    );
    let deleted = ask(&p, "legacy shim");
    let f = deleted
        .iter()
        .find(|f| f.id.starts_with(&s.remove_legacy.to_string()))
        .expect("the deletion commit");
    assert!(f
        .content
        .as_deref()
        .expect("content")
        .contains("D src/legacy.rs"));
    // A deleted file is no relation target: it is not in the working tree.
    assert!(f.relations.is_empty(), "{:?}", f.relations);
}

#[test]
fn as_of_excludes_every_later_commit() {
    let r = TestRepo::new();
    let s = story(&r);
    let p = r.open();
    let mut q = ContextQuery::new("history of the retry loop", 50, 50_000);
    q.as_of = Some(Timestamp::from_unix(T0 + 2 * DAY, 0).to_string());
    let frames = p.query(&q).expect("query").frames;
    assert!(frames
        .iter()
        .any(|f| f.id.starts_with(&s.fix_backoff.to_string())));
    assert!(frames
        .iter()
        .any(|f| f.id.starts_with(&s.add_retry.to_string())));
    assert!(!frames
        .iter()
        .any(|f| f.id.starts_with(&s.document_retry.to_string())));
    let pin = T0 + 2 * DAY;
    for f in &frames {
        let from = Timestamp::parse(f.valid_from.as_deref().expect("valid_from"))
            .expect("F4")
            .unix_seconds();
        assert!(from <= pin, "{} is after as_of", f.id);
    }
}

#[test]
fn other_kinds_get_no_frames() {
    let r = TestRepo::new();
    story(&r);
    let p = r.open();
    let mut q = ContextQuery::new("retry loop", 50, 50_000);
    q.kinds = vec![FrameKind::Symbol];
    assert!(p.query(&q).expect("query").frames.is_empty());
}

#[test]
fn a_new_commit_is_indexed_incrementally() {
    let r = TestRepo::new();
    story(&r);
    let p = r.open();
    let before = p.commits();
    let id = r.commit(
        "Add jitter to the retry loop",
        T0 + 9 * DAY,
        &[crate::repo::Op::Write(
            "src/jitter.rs",
            "pub fn jitter() {}\n",
        )],
    );
    let frames = ask(&p, "jitter");
    assert_eq!(p.commits(), before + 1);
    let b = p.last_build();
    assert!(b.incremental && b.commits_read == 1, "{b:?}");
    assert!(frames.iter().any(|f| f.id.starts_with(&id.to_string())));
}

#[test]
fn a_plain_goal_gets_no_history_frame_a_history_question_does() {
    let r = TestRepo::new();
    story(&r);
    let p = r.open();
    // Several commits match "retry loop"; a task goal gets none by default…
    assert_eq!(ask_raw(&p, "retry loop").len(), 0);
    // … or as many as configured.
    let one = contextgraph_provider_history::HistoryProvider::open(
        r.dir.path(),
        contextgraph_provider_history::HistoryOptions {
            plain_goal_frames: 1,
            ..r.options()
        },
    )
    .expect("open");
    assert_eq!(ask_raw(&one, "retry loop").len(), 1);
    assert!(ask_raw(&p, "why does the retry loop look like this").len() >= 3);
    assert!(ask_raw(&p, "when was the retry loop changed").len() >= 3);
}

#[test]
fn the_index_is_loaded_on_first_use_not_at_open() {
    let r = TestRepo::new();
    story(&r);
    let p = r.open();
    let file = p.index_file().expect("persisted").to_path_buf();
    // A plain task goal is answered (with nothing) without the index.
    assert!(ask_raw(&p, "retry loop").is_empty());
    assert!(!file.exists(), "built before it was needed");
    assert!(!ask(&p, "retry loop").is_empty());
    assert!(file.exists());
}
