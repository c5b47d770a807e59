//! Helpers of the tests that run the provider conformance suite
//! (`contextgraph-conformance`) against this crate's binary. They live here,
//! beside the `[[bin]]`, so the binary is found through `CARGO_BIN_EXE`.

use std::path::PathBuf;
use std::time::Duration;

use contextgraph_conformance::SuiteOptions;

/// The docs provider binary.
pub fn docs_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_contextgraph-provider-docs"))
}

/// Suite options for tests: the documented defaults, except a request
/// timeout with headroom for a shared, noisy machine (a hang guard, not a
/// speed assertion).
pub fn options() -> SuiteOptions {
    SuiteOptions::default()
        .strict(true)
        .with_request_timeout(Duration::from_secs(5))
        .with_shutdown_grace(Duration::from_secs(3))
}

/// A folder of Markdown about a retry policy.
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
