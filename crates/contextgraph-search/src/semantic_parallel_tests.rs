//! The embedding pass on many threads computes what it computes on one:
//! the saved index and vectors of a build with 1 thread and with several
//! are byte-identical (windows and shards are made small under test, so a
//! small tree spans many of each).

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

/// Every file under `dir` (relative path, bytes), in path order.
fn files_of(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
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

fn build(root: &Path, cache: &Path, threads: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.to_path_buf()),
        threads,
        clock: Arc::new(|| Timestamp::from_system_time(UNIX_EPOCH + Duration::from_secs(1 << 30))),
        ..WorkspaceOptions::default()
    };
    let (ws, _) = Workspace::open(root, options).unwrap();
    let chunks = ws.stats().chunks;
    assert!(chunks > 3 * super::EMBED_WINDOW, "{chunks} chunks: too few windows");
    let semantic = ws.shared.semantic.lock().unwrap();
    assert!(
        semantic.as_ref().is_some_and(|s| s.len() > 3 * super::EMBED_WINDOW),
        "the chunks were not embedded"
    );
    drop(semantic);
    files_of(cache)
}

#[test]
fn many_threads_save_the_same_bytes_as_one() {
    let root = tempfile::tempdir().unwrap();
    tree(root.path());
    let one = tempfile::tempdir().unwrap();
    let serial = build(root.path(), one.path(), 1);
    assert!(
        serial.iter().any(|(p, _)| p.to_string_lossy().contains("vectors")),
        "no vectors file saved: {:?}",
        serial.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for threads in [2, 4, 7] {
        let many = tempfile::tempdir().unwrap();
        let parallel = build(root.path(), many.path(), threads);
        assert_eq!(
            serial.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            parallel.iter().map(|(p, _)| p).collect::<Vec<_>>()
        );
        for ((path, a), (_, b)) in serial.iter().zip(&parallel) {
            assert!(a == b, "{} differs with {threads} threads", path.display());
        }
    }
}
