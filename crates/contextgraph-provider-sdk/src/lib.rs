//! Provider SDK for the Context Graph Protocol.
//!
//! Implement [`Provider`] (identity, data flow, capabilities, `query`, and
//! optionally `verify`) and hand it to a runner; the runner speaks the
//! protocol for you:
//!
//! - [`serve_stdio`] / [`serve()`] ([`serve` module](mod@serve)): handshake,
//!   correlation, concurrency, malformed input, honesty guard, shutdown;
//!   [`Session`] is the same logic without I/O, for other transports.
//! - [`FrameBuilder`]: frames whose `token_cost` (B3) and `content_digest`
//!   (D1) are computed, never typed.
//! - [`file_excerpt`], [`read_range`], [`path_to_file_uri`],
//!   [`file_uri_to_path`]: file provenance whose digest covers exactly the
//!   addressed bytes (F5).
//! - [`pack()`] with [`filter_kinds`], [`filter_as_of`], [`check_embedding`]:
//!   an answer that honours the budget and says truthfully what it left out.
//! - [`verify_each`] with [`verdict`]: `verify` by frame id and digest;
//!   the identity's `provider_id` is the host's label, echoed back, never
//!   judged ([`verify` module](mod@verify)).
//! - [`audit_answer`], [`complete_verdicts`]: the checks the runner applies,
//!   callable from a provider's own tests.
//!
//! Over stdio, stdout *is* the protocol channel: a provider must never print
//! to it (use stderr, as the runner does for its own diagnostics), or the
//! host reads the stray text as a malformed envelope.

#![warn(missing_docs)]

/// Write one diagnostic line to stderr. Unlike `eprintln!`, a closed stderr
/// is not a panic: a provider whose host closed its stderr keeps serving.
macro_rules! diag {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod digest;
mod digest_memo;
pub mod file_provenance;
pub mod frame_builder;
pub mod honesty;
pub mod pack;
mod provider;
pub mod serve;
pub mod verify;

pub use digest::{sha256_digest, Sha256Hasher};
pub use file_provenance::{
    count_lines, file_excerpt, file_excerpt_of, file_uri_to_path, path_to_file_uri, read_range,
    whole_file_provenance, FileExcerpt, FileUriError, ProvenanceError,
};
pub use frame_builder::{clamp_score, FrameBuilder};
pub use honesty::{audit_answer, audit_verdicts, complete_verdicts};
pub use pack::{check_embedding, filter_as_of, filter_kinds, pack, rank};
pub use provider::{Provider, ProviderError};
pub use serve::{
    serve, serve_stdio, serve_stdio_with, Dispatch, Job, ServeError, ServeOptions, Session,
};
pub use verify::{verdict, verify_each, Served};
