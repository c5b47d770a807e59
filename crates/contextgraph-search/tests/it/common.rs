//! A small repository written into a temporary directory, and a search
//! helper returning `path#local_id` of the hits, best first.

use std::path::Path;

use contextgraph_search::{CacheLocation, FileCache, SearchOptions, Workspace, WorkspaceOptions};

pub const NET_RS: &str = "//! Networking.\n\n/// Retry a request with backoff.\npub fn retry_loop(max_attempts: u32) -> u32 {\n    let mut n = 0;\n    while n < max_attempts {\n        n += 1;\n    }\n    n\n}\n";
pub const CONFIG_RS: &str = "/// Parse a timeout in milliseconds.\npub fn parse_timeout(text: &str) -> u64 {\n    text.trim().parse().unwrap_or(30_000)\n}\n";
pub const README: &str =
    "# Demo\n\n## Installing\n\nRun the installer script and restart the shell.\n";

/// Write `files` (path, content) under `root`, creating directories.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create fixture directory");
        }
        std::fs::write(path, text).expect("write fixture file");
    }
}

/// A temporary repository with a Rust crate and a README.
pub fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    write_files(
        dir.path(),
        &[
            ("src/net.rs", NET_RS),
            ("src/config.rs", CONFIG_RS),
            ("README.md", README),
        ],
    );
    dir
}

/// Options persisting the index under `cache`.
pub fn options(cache: &Path) -> WorkspaceOptions {
    WorkspaceOptions {
        cache: CacheLocation::Base(cache.to_path_buf()),
        threads: 2,
        ..WorkspaceOptions::default()
    }
}

/// `path#local_id` of every hit for `goal`, best first.
pub fn hits(workspace: &Workspace, goal: &str) -> Vec<String> {
    let view = workspace.view();
    let mut files = FileCache::default();
    view.search(goal, &SearchOptions::default(), &mut files)
        .iter()
        .filter_map(|hit| view.chunk(hit.slot))
        .map(|(path, chunk)| format!("{path}#{}", chunk.local_id))
        .collect()
}
