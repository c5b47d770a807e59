//! The embedding on many threads computes what it computes on one: the
//! saved index and vectors of a build with 1 thread and with several are
//! byte-identical, whether the vectors come from a cold build's workers
//! (`semantic_cold.rs`) or from the pass after a build (windows and shards
//! are made small under test, so a small tree spans many of each); and
//! the two paths save the same vectors.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use contextgraph_types::Timestamp;

use crate::{CacheLocation, Workspace, WorkspaceOptions};

/// A tree of many small Rust files, some chunks repeated across files
/// (the same content: one vector reused by digest).
fn tree(root: &Path) {
    for f in 0..30 {
        let mut text = String::new();
        for g in 0..6 {
            text.push_str(&format!(
                "/// Retries the request number {g} of file {f}.\npub fn call_{f}_{g}(attempts: u32) -> u32 {{\n    let backoff = attempts * {g};\n    backoff + {f}\n}}\n\n"
            ));
        }
        // Identical in every file.
        text.push_str("pub fn shared_helper() -> u32 {\n    let x = 1;\n    x + 1\n}\n");
        std::fs::write(root.join(format!("f{f:02}.rs")), text).unwrap();
    }
}

/// Every file under `dir` (relative path, bytes), in path order, but the
/// saved tree (`tree.bin`): its stamps hold the time of the scan, not of
/// the clock the options give, and it is freshness metadata, not the index.
fn files_of(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != "tree.bin") {
                out.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn options(cache: &Path, threads: usize, semantic: bool) -> WorkspaceOptions {
    WorkspaceOptions {
        cache: CacheLocation::Base(cache.to_path_buf()),
        threads,
        semantic,
        clock: Arc::new(|| Timestamp::from_system_time(UNIX_EPOCH + Duration::from_secs(1 << 30))),
        ..WorkspaceOptions::default()
    }
}

/// Opens `root` with the cache in `cache`; asserts that the vectors were
/// laid out by the path named (`by_workers`: a cold build's workers, else
/// the pass after a build) and that the tree spans many windows.
fn open(root: &Path, cache: &Path, threads: usize, by_workers: bool) -> Workspace {
    let (ws, _) = Workspace::open(root, options(cache, threads, true)).unwrap();
    let chunks = ws.stats().chunks;
    assert!(
        chunks > 3 * super::EMBED_WINDOW,
        "{chunks} chunks: too few windows"
    );
    {
        let guard = ws.shared.semantic.lock().unwrap();
        let semantic = guard.as_ref().expect("the chunks were not embedded");
        assert!(semantic.len() > 3 * super::EMBED_WINDOW, "too few vectors");
        assert_eq!(semantic.by_workers, by_workers, "not the path under test");
    }
    ws
}

/// A cold build, its vectors embedded by the workers that chunk.
fn build(root: &Path, cache: &Path, threads: usize) -> Vec<(PathBuf, Vec<u8>)> {
    drop(open(root, cache, threads, true));
    files_of(cache)
}

/// A cold build without the semantic signal, then a new process's open
/// with it: the snapshot loaded, every vector embedded by the pass after
/// a build (`SemanticIndex::update`, its windows on all threads).
fn build_then_embed(root: &Path, cache: &Path, threads: usize) -> Vec<(PathBuf, Vec<u8>)> {
    drop(Workspace::open(root, options(cache, threads, false)).unwrap());
    assert!(
        !files_of(cache)
            .iter()
            .any(|(p, _)| p.to_string_lossy().contains("vectors")),
        "vectors saved with the signal off"
    );
    drop(open(root, cache, threads, false));
    files_of(cache)
}

fn assert_same(a: &[(PathBuf, Vec<u8>)], b: &[(PathBuf, Vec<u8>)], what: &str) {
    assert_eq!(
        a.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        b.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        "{what}"
    );
    for ((path, x), (_, y)) in a.iter().zip(b) {
        assert!(x == y, "{} differs: {what}", path.display());
    }
}

#[test]
fn many_threads_save_the_same_bytes_as_one() {
    let root = tempfile::tempdir().unwrap();
    tree(root.path());
    let one = tempfile::tempdir().unwrap();
    let serial = build(root.path(), one.path(), 1);
    assert!(
        serial
            .iter()
            .any(|(p, _)| p.to_string_lossy().contains("vectors")),
        "no vectors file saved: {:?}",
        serial.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for threads in [2, 4, 7] {
        let many = tempfile::tempdir().unwrap();
        let parallel = build(root.path(), many.path(), threads);
        assert_same(
            &serial,
            &parallel,
            &format!("cold build, {threads} threads"),
        );
    }
}

/// The vectors a cold build's workers lay out are the ones the pass after
/// a build computes on the same index, with one thread or several: the
/// same index, vectors and tail files, byte for byte.
#[test]
fn cold_build_vectors_are_the_pass_after_a_builds() {
    let root = tempfile::tempdir().unwrap();
    tree(root.path());
    let cold = tempfile::tempdir().unwrap();
    let by_workers = build(root.path(), cold.path(), 2);
    for threads in [1, 3] {
        let after = tempfile::tempdir().unwrap();
        let by_pass = build_then_embed(root.path(), after.path(), threads);
        assert_same(
            &by_workers,
            &by_pass,
            &format!("pass after a build, {threads} threads"),
        );
    }
}
