//! Freshness: a refresh cut short by its deadline names the files it did not
//! reach (and a later one reaches them); the watcher re-indexes a change
//! without anyone asking.

use std::time::{Duration, Instant};

use contextgraph_search::Workspace;

use crate::common::{hits, options, repo, write_files};

#[test]
fn a_refresh_past_its_deadline_lists_the_files_it_did_not_reach() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    write_files(
        dir.path(),
        &[
            ("src/late_a.rs", "pub fn tardy_aardvark() {}\n"),
            ("src/late_b.rs", "pub fn tardy_badger() {}\n"),
        ],
    );
    std::fs::remove_file(dir.path().join("README.md")).expect("delete");
    let report = ws.refresh_within(Duration::ZERO).expect("refresh");
    assert_eq!(report.pending, ["src/late_a.rs", "src/late_b.rs"]);
    assert_eq!(report.removed, 1, "removals are applied regardless");
    assert!(hits(&ws, "tardy_aardvark").is_empty());
    let report = ws.refresh().expect("refresh");
    assert!(report.pending.is_empty());
    assert_eq!(report.added, 2);
    assert!(
        hits(&ws, "tardy_aardvark").contains(&"src/late_a.rs#late_a::tardy_aardvark".to_string())
    );
}

#[test]
fn the_watcher_reindexes_a_new_file_without_a_refresh_call() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    let _watch = ws
        .watch(Duration::from_millis(50), |e| panic!("refresh failed: {e}"))
        .expect("watch");
    write_files(
        dir.path(),
        &[("src/watched.rs", "pub fn vigilant_heron() {}\n")],
    );
    let wanted = "src/watched.rs#watched::vigilant_heron".to_string();
    let until = Instant::now() + Duration::from_secs(10);
    while !hits(&ws, "vigilant_heron").contains(&wanted) {
        assert!(
            Instant::now() < until,
            "the watcher never re-indexed the new file"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
