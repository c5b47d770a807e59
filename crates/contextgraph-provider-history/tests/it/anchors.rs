//! Anchors: blame of an anchored line, the commits touching an anchored file.

use contextgraph_provider_sdk::Provider;
use contextgraph_types::ContextQuery;

use crate::repo::{story, TestRepo};

fn anchored(goal: &str, anchor: String) -> ContextQuery {
    let mut q = ContextQuery::new(goal, 50, 50_000);
    q.anchors = vec![anchor];
    q
}

#[test]
fn an_anchored_line_pulls_the_commit_that_last_changed_it() {
    let r = TestRepo::new();
    let s = story(&r);
    let p = r.open();
    // Line 5 was last changed by the backoff fix, though the newest commit
    // touching the file is the documentation one (line 10).
    let q = anchored("why is it like this", "src/net.rs:5".into());
    let frames = p.query(&q).expect("query").frames;
    let top = frames.first().expect("a frame");
    assert_eq!(top.id, format!("{}:src/net.rs", s.fix_backoff));
    // The same through a file URI with a line fragment.
    let uri = format!("file://{}/src/net.rs#L5", r.root().display());
    let frames = p
        .query(&anchored("why is it like this", uri))
        .expect("query")
        .frames;
    assert_eq!(
        frames.first().map(|f| f.id.as_str()),
        Some(format!("{}:src/net.rs", s.fix_backoff).as_str())
    );
    // Line 10 belongs to the documentation commit.
    let frames = p
        .query(&anchored("why", "src/net.rs:10".into()))
        .expect("query")
        .frames;
    assert_eq!(
        frames.first().map(|f| f.id.as_str()),
        Some(format!("{}:src/net.rs", s.document_retry).as_str())
    );
}

#[test]
fn an_anchored_file_pulls_the_commits_that_touched_it() {
    let r = TestRepo::new();
    let s = story(&r);
    let p = r.open();
    let frames = p
        .query(&anchored("history", "src/net.rs".into()))
        .expect("query")
        .frames;
    let ids: Vec<&str> = frames.iter().map(|f| f.id.as_str()).collect();
    for c in [s.add_retry, s.fix_backoff, s.document_retry] {
        assert!(
            ids.contains(&format!("{c}:src/net.rs").as_str()),
            "{c} missing from {ids:?}"
        );
    }
    // Newest first among commits with the same evidence kind.
    assert_eq!(
        ids.first().copied(),
        Some(format!("{}:src/net.rs", s.document_retry).as_str())
    );
    assert!(!ids
        .iter()
        .any(|i| i.starts_with(&s.parse_config.to_string())));
}
