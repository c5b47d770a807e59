//! Test support for the contextgraph workspace (not published).
//!
//! Every crate's tests load wire data through here, so no crate grows its own
//! copy of the loading code and there is one answer to "which data is this?":
//!
//! - [`fixtures`]: the project's own test vectors, in this crate's
//!   `fixtures/` directory (a session transcript, reference messages, the
//!   envelope JSON Schema). Always present: a fresh clone tests with Rust alone.
//! - [`interop`]: other implementations' wire data in `../shared/wire/`
//!   beside the repository. Interoperability tests run when it is there and
//!   are skipped with a printed note when it is not (CI has it; set
//!   `CGP_REQUIRE_SHARED=1` to turn a skip into a failure).
//! - [`assert_schema_valid`] and friends: an envelope is checked against our
//!   schema, and also against the shared one when it is present.
//! - [`pipe`]: a provider process on real pipes, every line it sends
//!   schema-checked; [`docs_fixture`]: the docs provider's test folder and
//!   the honest-answer audit (used by the docs provider's tests and `cgp
//!   serve docs`'s).
//! - `http_server` (feature `http`): a loopback HTTP(S) server with a
//!   synchronous handler, for tests of HTTP clients.
//! - `mcp_fixture_server` (feature `mcp`): the MCP server the bridge tests
//!   spawn, as a function for each crate's fixture `[[bin]]`.
//! - [`sandbox`]: `cgp` in a scratch home and workspace.
//! - [`fuzz_replay`]: every kept fuzz input (`fuzz/seeds`, `fuzz/regressions`)
//!   replayed through its target's body by the stable test suite.
//! - [`corpus`]: benchmark corpora copied into a scratch workspace, and the
//!   process's peak memory.
//! - [`foreign`]: a provider with the faults of other CGP implementations
//!   (digests of other bytes, `L<n>` ranges, `max_frames` ignored), for the
//!   host's repair policy tests, as a function for each crate's fixture `[[bin]]`.
//!
//! Programs a test spawns are `[[bin]]` targets of the crate under test,
//! found through `CARGO_BIN_EXE_<name>`; nothing here runs a nested `cargo
//! build`.

#![warn(missing_docs)]

pub mod corpus;
pub mod docs_fixture;
pub mod fixtures;
pub mod foreign;
pub mod fuzz_replay;
#[cfg(feature = "http")]
pub mod http_server;
pub mod interop;
#[cfg(feature = "mcp")]
pub mod mcp_fixture_server;
pub mod pipe;
mod schema;

pub mod sandbox;

pub use schema::{assert_line_schema_valid, assert_schema_valid, envelope_schema, schema_errors};
