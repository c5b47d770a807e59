//! `cgp` end to end, one test binary for the crate (one link instead of
//! fifteen on a 2-core CI): one module per behaviour, shared helpers in
//! `common`. Every test runs the real `cgp` binary in child processes, so
//! none needs a process of its own.

/// The `cgp` binary under test.
pub const CGP: &str = env!("CARGO_BIN_EXE_cgp");

mod common;

mod bridge;
mod config;
mod consent;
mod consent_prompt;
mod context;
mod freshness;
mod inspect_docs_strict;
mod inspect_exit_codes;
mod inspect_host;
mod inspect_http_auth;
mod mcp;
mod providers;
mod serve_docs;
mod serve_http;
mod serve_workspace;
mod trust_boundary;
mod usage;
