//! The quick check against a full walk's tree, on a real directory. Scans
//! are dated an hour ahead so every stamp counts as settled (the racy
//! window has its own test).

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::*;
use crate::tree::nanos;

const HOUR_NS: i64 = 3_600_000_000_000;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn later() -> i64 {
    nanos(SystemTime::now()) + HOUR_NS
}

/// A small tree and the tree a full scan remembers of it.
fn scanned() -> (tempfile::TempDir, std::path::PathBuf, Tree) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    write(&root, "src/lib.rs", "pub fn alpha() {}\n");
    write(&root, "src/deep/mod.rs", "pub fn beta() {}\n");
    write(&root, "docs/guide.md", "# Guide\n");
    write(&root, "docs/.gitignore", "*.tmp\n");
    write(&root, ".gitignore", "target/\n");
    write(&root, "target/out.rs", "pub fn built() {}\n");
    let (walked, tree) = full_scan(&root, &WalkOptions::default(), later(), 2);
    let tree = tree.expect("every path is UTF-8");
    assert!(walked.files.iter().any(|f| f.rel_path == "src/deep/mod.rs"));
    assert!(!walked
        .files
        .iter()
        .any(|f| f.rel_path.starts_with("target/")));
    (dir, root, tree)
}

fn quick(root: &Path, tree: &mut Tree) -> Option<Delta> {
    quick_scan(root, tree, &WalkOptions::default(), later(), 2)
}

fn paths(files: &[WalkedFile]) -> Vec<&str> {
    files.iter().map(|f| f.rel_path.as_str()).collect()
}

#[test]
fn an_unchanged_tree_reports_nothing_and_keeps_its_tree() {
    let (_dir, root, mut tree) = scanned();
    let before = tree.clone();
    let delta = quick(&root, &mut tree).expect("no rules changed");
    assert!(delta.candidates.is_empty() && delta.verify.is_empty() && delta.gone.is_empty());
    assert!(!delta.tree_changed);
    assert_eq!(tree, before);
}

#[test]
fn an_edit_that_keeps_size_and_restores_the_mtime_is_found() {
    let (_dir, root, mut tree) = scanned();
    let path = root.join("src/lib.rs");
    let mtime = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .expect("mtime");
    // Make sure the change time can move past the one remembered.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&path, "pub fn gamma() {}\n").expect("same size");
    let file = std::fs::File::options()
        .write(true)
        .open(&path)
        .expect("open");
    file.set_modified(mtime).expect("restore mtime");
    drop(file);
    let delta = quick(&root, &mut tree).expect("no rules changed");
    assert_eq!(paths(&delta.candidates), ["src/lib.rs"]);
}

#[test]
fn a_new_file_in_a_new_subdirectory_is_found() {
    let (_dir, root, mut tree) = scanned();
    write(&root, "src/fresh/nested/new.rs", "pub fn delta() {}\n");
    write(&root, "src/fresh/nested/skip.png", "not really");
    let delta = quick(&root, &mut tree).expect("no rules changed");
    assert_eq!(paths(&delta.candidates), ["src/fresh/nested/new.rs"]);
    assert!(tree.dirs.contains_key("src/fresh") && tree.dirs.contains_key("src/fresh/nested"));
    assert_eq!(
        tree.files
            .get("src/fresh/nested/skip.png")
            .and_then(|k| k.skipped),
        Some(crate::SkipReason::Binary)
    );
    // And the next check is quiet again.
    let delta = quick(&root, &mut tree).expect("no rules changed");
    assert!(delta.candidates.is_empty() && !delta.tree_changed);
}

#[test]
fn a_deleted_directory_takes_its_files_and_its_rules_with_it() {
    let (_dir, root, mut tree) = scanned();
    std::fs::remove_dir_all(root.join("docs")).expect("rm");
    std::fs::remove_dir_all(root.join("src/deep")).expect("rm");
    let delta = quick(&root, &mut tree).expect("the rules went with their directory");
    assert_eq!(
        delta.gone,
        ["docs/.gitignore", "docs/guide.md", "src/deep/mod.rs"]
    );
    assert!(!tree.dirs.contains_key("docs") && !tree.dirs.contains_key("src/deep"));
    assert!(!tree.files.contains_key("docs/.gitignore"));
    assert!(!tree.rules.contains_key(&root.join("docs/.gitignore")));
}

#[test]
fn a_new_file_matching_an_ignore_rule_is_not_read() {
    let (_dir, root, mut tree) = scanned();
    write(&root, "docs/scratch.tmp", "ignored by docs/.gitignore");
    write(&root, "target/more.rs", "pub fn ignored() {}\n");
    write(&root, "docs/kept.md", "# Kept\n");
    let delta = quick(&root, &mut tree).expect("no rules changed");
    assert_eq!(paths(&delta.candidates), ["docs/kept.md"]);
}

#[test]
fn a_changed_or_new_ignore_file_needs_a_full_walk() {
    let (_dir, root, mut tree) = scanned();
    write(&root, ".gitignore", "target/\nsrc/\n");
    assert!(quick(&root, &mut tree).is_none(), "edited .gitignore");

    let (_dir, root, mut tree) = scanned();
    write(&root, "src/.cgpignore", "deep/\n");
    assert!(quick(&root, &mut tree).is_none(), "new .cgpignore");

    let (_dir, root, mut tree) = scanned();
    std::fs::remove_file(root.join("docs/.gitignore")).expect("rm");
    assert!(quick(&root, &mut tree).is_none(), "deleted .gitignore");
}

#[test]
fn other_walk_options_need_a_full_walk() {
    let (_dir, root, mut tree) = scanned();
    let options = WalkOptions {
        include_secrets: true,
        ..WalkOptions::default()
    };
    assert!(quick_scan(&root, &mut tree, &options, later(), 2).is_none());
}

#[test]
fn a_file_grown_past_the_size_cap_is_gone_from_the_index() {
    let (_dir, root, _) = scanned();
    let options = WalkOptions {
        max_file_bytes: 64,
        ..WalkOptions::default()
    };
    let (_, tree) = full_scan(&root, &options, later(), 2);
    let mut tree = tree.expect("every path is UTF-8");
    write(&root, "src/lib.rs", &"pub fn alpha() {}\n".repeat(10));
    let delta = quick_scan(&root, &mut tree, &options, later(), 2).expect("no rules changed");
    assert_eq!(delta.gone, ["src/lib.rs"]);
    assert_eq!(
        tree.files.get("src/lib.rs").and_then(|k| k.skipped),
        Some(crate::SkipReason::TooLarge)
    );
}

#[test]
fn stamps_too_fresh_to_trust_are_verified_not_reported_changed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    write(&root, "src/lib.rs", "pub fn alpha() {}\n");
    let now = nanos(SystemTime::now());
    let (_, tree) = full_scan(&root, &WalkOptions::default(), now, 2);
    let mut tree = tree.expect("every path is UTF-8");
    let delta = quick_scan(&root, &mut tree, &WalkOptions::default(), now, 2).expect("quick");
    assert!(delta.candidates.is_empty());
    assert_eq!(paths(&delta.verify), ["src/lib.rs"]);
    // Verified by a scan that trusts it: quiet from then on.
    let delta = quick(&root, &mut tree).expect("quick");
    assert_eq!(paths(&delta.verify), ["src/lib.rs"]);
    let delta = quick(&root, &mut tree).expect("quick");
    assert!(delta.verify.is_empty() && delta.candidates.is_empty());
}

#[cfg(target_os = "linux")]
#[test]
fn a_name_that_is_not_utf8_keeps_every_check_a_full_walk() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    write(&root, "src/lib.rs", "pub fn alpha() {}\n");
    let name = std::ffi::OsStr::from_bytes(b"odd\xff.rs");
    std::fs::write(root.join("src").join(name), "pub fn omega() {}\n").expect("write");
    let (walked, tree) = full_scan(&root, &WalkOptions::default(), later(), 2);
    assert_eq!(walked.files.len(), 2);
    assert!(tree.is_none());
}

#[cfg(unix)]
#[test]
fn a_stat_relative_to_the_directory_equals_a_full_path_lstat() {
    let (_dir, root, _) = scanned();
    std::os::unix::fs::symlink("lib.rs", root.join("src/link.rs")).expect("symlink");
    // In depth-first order with returns to shallower directories, a
    // missing directory and a name sharing a prefix with a directory.
    write(&root, "src-extra/x.rs", "pub fn x() {}\n");
    let rels = [
        "",
        ".gitignore",
        "docs",
        "docs/guide.md",
        "nowhere/at/all.rs",
        "nowhere/else.rs",
        "src",
        "src/deep",
        "src/deep/mod.rs",
        "src/lib.rs",
        "src/link.rs",
        "src/missing.rs",
        "src-extra/x.rs",
        "src/deep/mod.rs",
        "README.md",
    ];
    let by_dir = stat_all(&root, &rels, 1);
    let by_path: Vec<Option<Stamp>> = rels.iter().map(|r| Stamp::at(&abs_of(&root, r))).collect();
    assert_eq!(by_dir, by_path);
    assert!(by_dir[10].is_some_and(|s| !s.is_dir()), "the link itself");
    assert_eq!((by_dir[4], by_dir[11]), (None, None));
    assert!(by_dir[12].is_some() && by_dir[13].is_some());
}

/// The directories stamped from the handles the file stats opened must be
/// what an `lstat` of their path says: a directory replaced by a symlink
/// to one is the symlink (so the check finds it gone), not its target.
#[cfg(target_os = "linux")]
#[test]
fn directory_stamps_from_open_handles_equal_a_full_path_lstat() {
    let (_dir, root, _) = scanned();
    write(&root, "moved/inner.rs", "pub fn inner() {}\n");
    std::os::unix::fs::symlink("moved", root.join("linked")).expect("symlink");
    write(&root, "only/dirs/below/leaf.rs", "pub fn leaf() {}\n");
    let dirs = [
        "",
        "docs",
        "gone",
        "linked",
        "moved",
        "only",
        "only/dirs",
        "only/dirs/below",
        "src",
        "src/deep",
    ];
    let files = [
        ".gitignore",
        "docs/guide.md",
        "gone/x.rs",
        "linked/inner.rs",
        "moved/inner.rs",
        "only/dirs/below/leaf.rs",
        "src/deep/mod.rs",
        "src/lib.rs",
    ];
    // Shards of one to three files on up to three threads: shards that
    // start inside a deep directory, or end on a directory's last file,
    // must stamp the same as one pass.
    for (threads, shard) in [(1, super::SHARD), (2, super::SHARD), (2, 1), (3, 2), (2, 3)] {
        let (dir_stamps, file_stamps) = stat_tree_in(&root, &dirs, &files, threads, shard);
        let lstat = |rels: &[&str]| -> Vec<Option<Stamp>> {
            rels.iter().map(|r| Stamp::at(&abs_of(&root, r))).collect()
        };
        assert_eq!(
            dir_stamps,
            lstat(&dirs),
            "{threads} threads, shards of {shard}"
        );
        assert_eq!(
            file_stamps,
            lstat(&files),
            "{threads} threads, shards of {shard}"
        );
        assert!(
            dir_stamps[3].is_some_and(|s| !s.is_dir()),
            "the link itself"
        );
        assert_eq!((dir_stamps[2], file_stamps[2]), (None, None));
    }
}

/// Shards cover every item once, come back in order whatever thread ran
/// them, and a shard whose thread panicked is reported missing, not lost.
#[test]
fn shards_cover_every_item_in_order_and_a_panicked_shard_is_missing() {
    for (len, shard, threads) in [(0, 4, 2), (1, 4, 2), (10, 3, 1), (10, 3, 2), (1000, 7, 3)] {
        let shards = in_shards(len, shard, threads, |r| r.clone().collect::<Vec<usize>>());
        let items: Vec<usize> = shards
            .iter()
            .flat_map(|(r, done)| {
                assert_eq!(done.as_ref(), Some(&r.clone().collect::<Vec<_>>()));
                r.clone()
            })
            .collect();
        assert_eq!(
            items,
            (0..len).collect::<Vec<_>>(),
            "{len} {shard} {threads}"
        );
    }
    let shards = in_shards(12, 3, 2, |r| {
        assert!(r.start != 6, "a shard that fails");
        r.len()
    });
    let missing: Vec<(usize, usize)> = shards
        .iter()
        .filter(|(_, d)| d.is_none())
        .map(|(r, _)| (r.start, r.end))
        .collect();
    assert_eq!(missing, [(6, 9)]);
    assert_eq!(shards.iter().filter(|(_, d)| *d == Some(3)).count(), 3);
}
