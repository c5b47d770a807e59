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

/// Backdate a file's modification time by an hour, so that its stamp is
/// older than the racy window and the quick check trusts it.
fn backdate(path: &std::path::Path) -> std::time::SystemTime {
    let when = std::time::SystemTime::now() - Duration::from_secs(3600);
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open");
    file.set_modified(when).expect("set mtime");
    when
}

#[test]
fn an_edit_that_keeps_size_and_mtime_is_reindexed() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let config = dir.path().join("src/config.rs");
    let mtime = backdate(&config);
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    ws.refresh().expect("refresh");
    let before = std::fs::read_to_string(&config).expect("read");
    let after = before.replace("parse_timeout", "parse_xyzzout");
    assert_eq!(before.len(), after.len());
    std::fs::write(&config, &after).expect("write");
    let file = std::fs::File::options()
        .write(true)
        .open(&config)
        .expect("open");
    file.set_modified(mtime).expect("restore mtime");
    drop(file);
    let report = ws.refresh().expect("refresh");
    assert_eq!(report.changed, 1, "{report:?}");
    assert!(hits(&ws, "parse_xyzzout").contains(&"src/config.rs#config::parse_xyzzout".into()));
    assert!(!hits(&ws, "parse_timeout").contains(&"src/config.rs#config::parse_timeout".into()));
}

#[test]
fn new_files_in_new_directories_and_deleted_directories_are_seen_across_sessions() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    write_files(
        dir.path(),
        &[("lib/old/gone.rs", "pub fn vanishing_walrus() {}\n")],
    );
    {
        let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
        ws.refresh().expect("refresh");
        assert!(!hits(&ws, "vanishing_walrus").is_empty());
    }
    // Between two sessions: a new file two directories deep, a directory gone.
    write_files(
        dir.path(),
        &[("lib/new/deeper/found.rs", "pub fn emerging_otter() {}\n")],
    );
    std::fs::remove_dir_all(dir.path().join("lib/old")).expect("rm");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("reopen");
    let report = ws.refresh().expect("refresh");
    assert_eq!((report.added, report.removed), (1, 1), "{report:?}");
    assert_eq!(
        hits(&ws, "emerging_otter"),
        ["lib/new/deeper/found.rs#found::emerging_otter"]
    );
    assert!(hits(&ws, "vanishing_walrus").is_empty());
}

#[test]
fn a_changed_gitignore_drops_and_admits_files() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    write_files(
        dir.path(),
        &[
            (".gitignore", "generated/\n"),
            ("generated/out.rs", "pub fn hidden_heron() {}\n"),
        ],
    );
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    assert!(hits(&ws, "hidden_heron").is_empty());
    assert!(!hits(&ws, "retry_loop").is_empty());
    write_files(dir.path(), &[(".gitignore", "src/\n")]);
    let report = ws.refresh().expect("refresh");
    assert!(report.added >= 1 && report.removed >= 2, "{report:?}");
    assert_eq!(
        hits(&ws, "hidden_heron"),
        ["generated/out.rs#out::hidden_heron"]
    );
    assert!(hits(&ws, "retry_loop").is_empty());
}

#[test]
fn a_corrupt_saved_tree_costs_a_walk_not_a_stale_answer() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    {
        let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
        ws.refresh().expect("refresh");
    }
    let mut trees = Vec::new();
    for entry in std::fs::read_dir(cache.path()).expect("cache").flatten() {
        let tree = entry.path().join("tree.bin");
        assert!(tree.is_file(), "the tree is saved beside the index");
        trees.push(tree);
    }
    for tree in &trees {
        let mut bytes = std::fs::read(tree).expect("read");
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(tree, bytes).expect("corrupt");
    }
    write_files(
        dir.path(),
        &[("src/extra/added.rs", "pub fn patient_lynx() {}\n")],
    );
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("reopen");
    ws.refresh().expect("refresh");
    assert_eq!(
        hits(&ws, "patient_lynx"),
        ["src/extra/added.rs#extra::added::patient_lynx"]
    );
}

#[test]
fn the_check_before_an_answer_does_not_wait_for_the_watcher() {
    // The watcher only hastens a refresh; the check before an answer stats
    // the files itself, so a change the watcher has not processed yet (its
    // debounce still running, or its events lost to a queue overflow) is
    // already in the answer.
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    let _watch = ws
        .watch(Duration::from_secs(3600), |e| panic!("refresh failed: {e}"))
        .expect("watch");
    write_files(
        dir.path(),
        &[("src/quiet/unseen.rs", "pub fn unheralded_ibis() {}\n")],
    );
    let report = ws.refresh_within(Duration::from_secs(5)).expect("refresh");
    assert!(report.pending.is_empty());
    assert_eq!(
        hits(&ws, "unheralded_ibis"),
        ["src/quiet/unseen.rs#quiet::unseen::unheralded_ibis"]
    );
}

#[test]
fn a_touched_file_keeps_its_chunks_and_its_new_time_survives_a_reload() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let config = dir.path().join("src/config.rs");
    backdate(&config);
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    ws.refresh().expect("refresh");
    // Same bytes, another modification time (a checkout, a `touch`).
    let later = std::time::SystemTime::now() - Duration::from_secs(1800);
    let file = std::fs::File::options()
        .write(true)
        .open(&config)
        .expect("open");
    file.set_modified(later).expect("set mtime");
    drop(file);
    let report = ws.refresh().expect("refresh");
    assert_eq!((report.touched, report.changed), (1, 0), "{report:?}");
    let wanted = "src/config.rs#config::parse_timeout".to_string();
    assert!(hits(&ws, "parse_timeout").contains(&wanted));
    drop(ws);
    // A new process replays the journal's touch: nothing left to re-read.
    let (ws, source) = Workspace::open(dir.path(), options(cache.path())).expect("reopen");
    assert_eq!(source, contextgraph_search::IndexSource::Loaded);
    let report = ws.refresh().expect("refresh");
    assert!(!report.changed_anything(), "{report:?}");
    assert!(hits(&ws, "parse_timeout").contains(&wanted));
}

#[test]
fn a_file_whose_saved_chunks_fail_their_checksum_is_not_served_and_the_next_refresh_rebuilds() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    let wanted = "src/config.rs#config::parse_timeout".to_string();
    assert!(hits(&ws, "parse_timeout").contains(&wanted));
    drop(ws);
    // Flip one byte of config.rs's saved chunk records (the first place
    // its qualified name appears: the records come before the terms).
    let index = std::fs::read_dir(cache.path())
        .expect("cache")
        .flatten()
        .map(|d| d.path().join("index.bin"))
        .find(|p| p.exists())
        .expect("index.bin");
    let mut bytes = std::fs::read(&index).expect("read");
    let needle = b"config::parse_timeout";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the record is saved");
    bytes[at] ^= 0x01;
    std::fs::write(&index, &bytes).expect("write");
    // The load checks the other sections only: it trusts the file...
    let (ws, source) = Workspace::open(dir.path(), options(cache.path())).expect("reopen");
    assert_eq!(source, contextgraph_search::IndexSource::Loaded);
    // ... but the corrupt chunks are never served, and no panic.
    assert!(!hits(&ws, "parse_timeout").contains(&wanted));
    // Nor trusted by the next process: it builds the index again.
    let (again, source) = Workspace::open(dir.path(), options(cache.path())).expect("reopen");
    assert_eq!(source, contextgraph_search::IndexSource::Built);
    assert!(hits(&again, "parse_timeout").contains(&wanted));
    drop(again);
    // This one rebuilds at its next refresh: served again.
    ws.refresh().expect("refresh");
    assert!(hits(&ws, "parse_timeout").contains(&wanted));
    drop(ws);
    let (ws, source) = Workspace::open(dir.path(), options(cache.path())).expect("reopen");
    assert_eq!(source, contextgraph_search::IndexSource::Loaded);
    assert!(
        hits(&ws, "parse_timeout").contains(&wanted),
        "the rebuilt index was saved"
    );
}

/// What the cache directory holds, file by file: name, size, modification
/// time and inode (a rewrite by rename changes the inode, an in-place write
/// the time or size).
fn cache_state(cache: &std::path::Path) -> Vec<(String, u64, std::time::SystemTime, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    for dir in std::fs::read_dir(cache).expect("cache").flatten() {
        for file in std::fs::read_dir(dir.path()).expect("index dir").flatten() {
            let meta = file.metadata().expect("metadata");
            out.push((
                file.file_name().to_string_lossy().into_owned(),
                meta.len(),
                meta.modified().expect("mtime"),
                meta.ino(),
            ));
        }
    }
    out.sort();
    out
}

/// A warm run over files that did not change writes nothing: not the index,
/// the journal, nor the saved tree (a rewrite would cost every `cgp context`
/// a write, and a synced one a disk flush).
#[cfg(unix)]
#[test]
fn an_unchanged_tree_is_checked_without_writing_anything() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    // Past the racy window, so every stamp is settled when first seen and
    // the first checks have nothing left to verify.
    std::thread::sleep(Duration::from_millis(2_100));
    {
        let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
        ws.refresh().expect("refresh");
    }
    let before = cache_state(cache.path());
    assert!(
        before.iter().any(|(name, ..)| name == "tree.bin"),
        "{before:?}"
    );
    for _ in 0..2 {
        let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("reopen");
        let report = ws.refresh().expect("refresh");
        assert!(!report.changed_anything(), "{report:?}");
        assert!(!hits(&ws, "parse_timeout").is_empty());
    }
    assert_eq!(cache_state(cache.path()), before);
}

// The watcher's word (issue 29): an answer skips the scan of the whole tree
// only while the watcher demonstrably keeps up (`watch_trust`).

use contextgraph_search::watch_trust::ScanNeeded;

/// Wait until `cond` holds (the watcher works on its own thread), or fail.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < until, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_scan_is_skipped_only_while_the_watcher_is_quiet_and_current() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    assert_eq!(ws.scan_needed(), Some(ScanNeeded::NoWatcher));
    assert!(ws
        .refresh_for_query(Duration::from_secs(5))
        .unwrap()
        .is_some());
    let watch = ws
        .watch(Duration::from_millis(50), |e| panic!("refresh failed: {e}"))
        .expect("watch");
    // Changes before the watch began are the first refresh's to find.
    assert_eq!(ws.scan_needed(), Some(ScanNeeded::NotYetRefreshed));
    assert!(ws
        .refresh_for_query(Duration::from_secs(5))
        .unwrap()
        .is_some());
    assert_eq!(ws.scan_needed(), None);
    assert!(ws
        .refresh_for_query(Duration::from_secs(5))
        .unwrap()
        .is_none());
    // An edit: the watcher re-indexes it, with no scan asked for.
    write_files(
        dir.path(),
        &[("src/fresh.rs", "pub fn nimble_quokka() {}\n")],
    );
    eventually("the watcher re-indexed the new file", || {
        hits(&ws, "nimble_quokka").contains(&"src/fresh.rs#fresh::nimble_quokka".to_string())
    });
    eventually("the watcher is current again", || {
        ws.scan_needed().is_none()
    });
    // Stopped: answers scan again.
    drop(watch);
    assert_eq!(ws.scan_needed(), Some(ScanNeeded::NoWatcher));
}

#[test]
fn an_overflowed_watcher_scans_until_a_refresh_and_a_failed_one_for_good() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    let watch = ws
        .watch(Duration::from_millis(50), |e| panic!("refresh failed: {e}"))
        .expect("watch");
    ws.refresh().expect("refresh");
    assert_eq!(ws.scan_needed(), None);
    watch.simulate_overflow();
    assert_eq!(ws.scan_needed(), Some(ScanNeeded::Overflowed));
    // The answer after an overflow scans, and finds what the lost events said.
    write_files(
        dir.path(),
        &[("src/lost.rs", "pub fn silent_pangolin() {}\n")],
    );
    let report = ws.refresh_for_query(Duration::from_secs(5)).unwrap();
    assert!(report.is_some(), "an overflow forces the scan");
    assert!(!hits(&ws, "silent_pangolin").is_empty());
    eventually("current again after the scan", || {
        ws.scan_needed().is_none()
    });
    watch.simulate_error("a watch was dropped");
    ws.refresh().expect("refresh");
    assert!(
        matches!(ws.scan_needed(), Some(ScanNeeded::Distrusted(ref why)) if why.contains("dropped")),
        "{:?}",
        ws.scan_needed()
    );
    assert!(ws
        .refresh_for_query(Duration::from_secs(5))
        .unwrap()
        .is_some());
}

#[cfg(unix)]
#[test]
fn a_change_the_watcher_never_saw_distrusts_it() {
    let dir = repo();
    let outside = tempfile::tempdir_in(dir.path().parent().expect("parent")).expect("outside");
    let cache = tempfile::tempdir().expect("cache directory");
    write_files(
        dir.path(),
        &[("src/linked.rs", "pub fn first_heron() {}\n")],
    );
    // A second name for the same file, outside the tree: inotify reports a
    // write to the watched directories only when made through their names.
    let link = outside.path().join("linked.rs");
    std::fs::hard_link(dir.path().join("src/linked.rs"), &link).expect("hard link");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    let _watch = ws
        .watch(Duration::from_millis(50), |e| panic!("refresh failed: {e}"))
        .expect("watch");
    ws.refresh().expect("refresh");
    assert_eq!(ws.scan_needed(), None);
    std::fs::write(&link, "pub fn second_egret() {}\n").expect("write through the link");
    // Old enough that its event, had there been one, would have arrived.
    let file = std::fs::File::options()
        .write(true)
        .open(&link)
        .expect("open");
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(30))
        .expect("set mtime");
    drop(file);
    std::thread::sleep(Duration::from_millis(300));
    if ws.scan_needed().is_some() || !hits(&ws, "second_egret").is_empty() {
        eprintln!("note: this kernel reported the write through the hard link; nothing was missed");
        return;
    }
    // The periodic refresh finds the change no event announced.
    let report = ws.refresh().expect("refresh");
    assert_eq!(report.changed, 1, "{report:?}");
    assert!(
        matches!(ws.scan_needed(), Some(ScanNeeded::Distrusted(ref why)) if why.contains("src/linked.rs")),
        "{:?}",
        ws.scan_needed()
    );
    assert!(ws
        .refresh_for_query(Duration::from_secs(5))
        .unwrap()
        .is_some());
}
