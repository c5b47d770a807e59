//! The Context Graph Protocol's envelopes and their NDJSON framing (§1, §2),
//! usable by hosts and providers alike, with no runtime and no policy.
//!
//! Over stdio every CGP envelope is one JSON object on one line; over HTTP
//! one envelope is one body. This crate turns a byte stream into lines
//! ([`framing`], [`reader`]), a line into an [`Envelope`] ([`decode`]), and
//! an envelope back into a line ([`encode_line`]).
//!
//! # Why a cap, and why recovery
//!
//! The peer on the other end of a pipe is untrusted: a buggy or hostile
//! provider can send a line that never ends. A reader without a cap buffers it
//! until the process runs out of memory, so every reader here enforces a
//! per-line limit ([`DEFAULT_MAX_LINE_BYTES`], 16 MiB, by default) and never
//! holds more than that limit plus one read.
//!
//! A bad line is a per-message fault, not a broken connection (R1: a provider
//! never crashes on a malformed line). An oversized line is dropped without
//! being buffered and reported once as an error item; the next line is
//! delivered as usual, so no message before or after it is lost. Blank lines
//! are skipped, CRLF is tolerated, and an unterminated last line still counts.
//! Lines are bytes: UTF-8 and JSON validity are the envelope decoder's call
//! ([`invalid_utf8_offset`] helps it explain a rejection).
//!
//! # Layers
//!
//! - [`envelope`]: the eight envelopes, plus [`Envelope::Unknown`] for a
//!   `type` this implementation does not know (a value, not an error).
//! - [`decode`]: one line → envelope, with a typed [`DecodeError`] per bad line.
//! - [`envelope_reader`]: [`EnvelopeReader`], lines and decoding joined.
//! - [`framing`]: the sans-IO [`LineFramer`] state machine; drive it from any
//!   byte source.
//! - [`reader`]: [`LineReader`], a blocking lending reader over
//!   [`std::io::Read`], and [`FrameError`].
//! - `async_reader` (feature `tokio`): `AsyncLineReader`, the same over
//!   `tokio::io::AsyncRead + Unpin`.
//!
//! # Cargo features
//!
//! - `tokio` (off by default): enables `AsyncLineReader`.

#![warn(missing_docs)]

pub mod decode;
pub mod envelope;
pub mod envelope_reader;
pub mod framing;
#[doc(hidden)]
pub mod fuzz;
pub mod reader;

#[cfg(feature = "tokio")]
pub mod async_reader;

#[cfg(feature = "tokio")]
pub use async_reader::AsyncLineReader;
pub use decode::{decode_envelope, encode_envelope_into, encode_line, DecodeError};
pub use envelope::{Envelope, ENVELOPE_TYPES};
pub use envelope_reader::{EnvelopeReader, ReadError};
pub use framing::{
    invalid_utf8_offset, FrameEvent, LineFramer, DEFAULT_MAX_LINE_BYTES, DEFAULT_READ_CHUNK_BYTES,
};
pub use reader::{FrameError, LineReader};
