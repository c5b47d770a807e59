//! Shared fixtures: suite options and a folder of Markdown for the docs
//! provider. The runs against the docs provider's and the misbehaving
//! fixture's binaries live in those crates' tests, where their binaries are
//! found through `CARGO_BIN_EXE`.

use std::time::Duration;

use contextgraph_conformance::SuiteOptions;

/// Suite options for tests: the documented defaults, except a request
/// timeout with headroom for a shared, noisy machine (a hang guard, not a
/// speed assertion).
pub fn options() -> SuiteOptions {
    SuiteOptions::default()
        .strict(true)
        .with_request_timeout(Duration::from_secs(5))
        .with_shutdown_grace(Duration::from_secs(3))
}

/// A folder of Markdown about a retry policy, for the docs provider.
pub fn markdown_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create folders");
        }
        std::fs::write(path, text).expect("write a document");
    };
    write(
        "retry.md",
        "# Retry policy\n\nRequests are retried with exponential backoff.\n\n## Backoff\n\nThe first delay is 100 ms and doubles after each attempt, up to `max_attempts` (4).\n\n## Timeouts\n\nEach attempt has a 30 second timeout; a timed-out attempt counts as a failure.\n",
    );
    write(
        "guide/overview.md",
        "# Overview\n\nThis project retries network calls. See [the retry policy](../retry.md).\n\n## Configuration\n\nSet `backoff_ms` and `max_attempts` in the client configuration.\n",
    );
    write(
        "notes.txt",
        "Timeouts and retries are configured per client.\n",
    );
    dir
}
