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

/// The testkit's folder about a retry policy.
pub use contextgraph_testkit::docs_fixture::markdown_folder;
