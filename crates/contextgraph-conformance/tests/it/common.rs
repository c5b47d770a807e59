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

/// The testkit's folder about a retry policy.
pub use contextgraph_testkit::docs_fixture::markdown_folder;
