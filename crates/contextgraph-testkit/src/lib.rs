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
//! - [`provider_binary`]: the provider binaries some tests spawn.

#![warn(missing_docs)]

mod binaries;
pub mod fixtures;
pub mod interop;
mod schema;

pub mod sandbox;

pub use binaries::provider_binary;
pub use schema::{assert_line_schema_valid, assert_schema_valid, envelope_schema, schema_errors};
