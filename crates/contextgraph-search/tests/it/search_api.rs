//! The public API end to end: open builds and persists the index, a search
//! ranks the defining chunk first, a reopen loads it, and refresh follows
//! edits, new files and deletions.

use contextgraph_search::{IndexSource, Workspace};

use crate::common::{hits, options, repo, write_files};

#[test]
fn open_builds_then_loads_and_search_ranks_the_definition_first() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, source) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    assert_eq!(source, IndexSource::Built);
    assert_eq!(ws.stats().files, 3);
    let found = hits(&ws, "retry_loop backoff");
    assert_eq!(
        found.first().map(String::as_str),
        Some("src/net.rs#net::retry_loop"),
        "{found:?}"
    );
    drop(ws);
    let (again, source) = Workspace::open(dir.path(), options(cache.path())).expect("reopen");
    assert_eq!(source, IndexSource::Loaded);
    assert_eq!(hits(&again, "retry_loop backoff"), found);
}

#[test]
fn the_accept_filter_and_anchors_shape_the_hits() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    let view = ws.view();
    let mut files = contextgraph_search::FileCache::default();
    let only_docs = |c: &contextgraph_search::index::ChunkRecord| {
        c.kind == contextgraph_search::chunk::ChunkKind::Doc
    };
    let ranked = view.search(
        "installer timeout retry",
        &contextgraph_search::SearchOptions {
            anchors: &[],
            accept: &only_docs,
            semantic: &[],
        },
        &mut files,
    );
    assert!(!ranked.is_empty());
    for hit in &ranked {
        let (path, _) = view.chunk(hit.slot).expect("live hit");
        assert_eq!(path, "README.md", "the filter admits only doc chunks");
    }
}

#[test]
fn refresh_follows_edits_additions_and_deletions() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    write_files(
        dir.path(),
        &[
            (
                "src/config.rs",
                "pub fn parse_deadline_pelican() -> u64 { 1 }\n",
            ),
            ("src/new.rs", "pub fn fresh_marmoset() {}\n"),
        ],
    );
    std::fs::remove_file(dir.path().join("src/net.rs")).expect("delete");
    let report = ws.refresh().expect("refresh");
    assert_eq!((report.added, report.changed, report.removed), (1, 1, 1));
    assert!(hits(&ws, "parse_deadline_pelican")
        .contains(&"src/config.rs#config::parse_deadline_pelican".to_string()));
    assert!(hits(&ws, "fresh_marmoset").contains(&"src/new.rs#new::fresh_marmoset".to_string()));
    assert!(hits(&ws, "retry_loop")
        .iter()
        .all(|id| !id.starts_with("src/net.rs")));
}
