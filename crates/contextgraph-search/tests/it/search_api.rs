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

/// A server bounds the chunk records it keeps decoded for later queries:
/// over the budget they are forgotten, and the next search decodes them
/// again and answers the same, built or loaded.
#[test]
fn decoded_records_past_the_budget_are_forgotten_and_answers_stay_the_same() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let other_cache = tempfile::tempdir().expect("cache directory");
    let (built, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    drop(built);
    for (ws, how) in [
        (
            Workspace::open(dir.path(), options(cache.path()))
                .expect("reopen")
                .0,
            "loaded",
        ),
        (
            Workspace::open(dir.path(), options(other_cache.path()))
                .expect("build")
                .0,
            "built",
        ),
    ] {
        let first = hits(&ws, "retry_loop backoff timeout");
        assert!(!first.is_empty(), "{how}");
        let decoded = ws.view().index().decoded_records();
        assert!(decoded > 0, "{how}: a search decodes the chunks it reads");
        assert!(
            !ws.bound_decoded_records(decoded),
            "{how}: at the budget nothing is forgotten"
        );
        assert_eq!(ws.view().index().decoded_records(), decoded, "{how}");
        assert!(
            ws.bound_decoded_records(decoded - 1),
            "{how}: past it, forgotten"
        );
        assert_eq!(ws.view().index().decoded_records(), 0, "{how}");
        assert_eq!(hits(&ws, "retry_loop backoff timeout"), first, "{how}");
        assert_eq!(
            ws.view().index().decoded_records(),
            decoded,
            "{how}: decoded again"
        );
    }
}
