//! The integration tests of the docs provider, in one test binary (one link
//! instead of one per file); one module per behaviour.

// The harness stays at `tests/common/mod.rs` because the `cgp` CLI's tests
// include the same file by path to drive `cgp serve docs` with it.
#[path = "../common/mod.rs"]
mod common;

mod anchors;
mod as_of;
mod budget;
mod correlation;
mod frame_honesty;
mod handshake;
mod kinds_filter;
mod malformed_input;
mod markdown_sections;
mod refresh;
mod scoring;
mod shutdown;
mod verify;
mod walk_rules;
