//! `cgp` end to end, one test binary for the crate (one link instead of
//! fifteen on a 2-core CI): one module per behaviour, shared helpers in
//! `common`. Every test runs the real `cgp` binary in child processes, so
//! none needs a process of its own.

/// The `cgp` binary under test.
pub const CGP: &str = env!("CARGO_BIN_EXE_cgp");

mod common;

#[cfg(feature = "test-fixtures")]
mod bridge;
mod cache;
mod config;
mod consent;
mod consent_prompt;
mod context;
mod conventions;
mod fanout;
mod freshness;
mod index;
mod inspect_docs_strict;
mod inspect_exit_codes;
mod inspect_host;
mod inspect_http_auth;
#[cfg(feature = "test-fixtures")]
mod interop_host;
mod mcp;
#[cfg(feature = "test-fixtures")]
mod mcp_startup;
#[cfg(feature = "test-fixtures")]
mod mcp_startup_ts;
#[cfg(unix)]
mod nginx;
mod output_width;
mod provider_start;
mod providers;
mod serve_docs;
mod serve_http;
mod serve_workspace;
#[cfg(feature = "test-fixtures")]
mod session;
mod trust_boundary;
mod trust_round_two;
mod usage;

/// The tests that spawn this package's test-fixture programs (the
/// misbehaving provider, the fixture MCP server) need the `test-fixtures`
/// feature, which builds them. Without it they are not compiled; this test
/// fails instead of letting them be skipped in silence.
#[cfg(not(feature = "test-fixtures"))]
#[test]
fn the_test_fixture_programs_are_built() {
    panic!(
        "the `cgp bridge mcp` and `cgp inspect` failure tests need the test-fixture programs: \
         run `cargo test --workspace --all-features` (the README's command) or \
         `cargo test -p contextgraph-cli --features test-fixtures`"
    );
}
