//! A Context Graph Protocol provider that misbehaves on purpose: a test
//! fixture (`publish = false`), never a dependency of a library crate nor
//! part of `cgp` (the host suite embeds the few adversaries it needs).
//!
//! A conformance check that only ever passes proves nothing (REQUIREMENTS
//! §5). This crate's binary, `contextgraph-misbehaving-provider`, has a
//! fully conformant `normal` mode that exercises every capability (graph
//! frames, anchors, `as_of`, embeddings, verify, correlation), and one
//! [`Mode`] per guarantee that breaks exactly that guarantee and nothing
//! else, so a host or a conformance suite can show each of its checks fires.
//!
//! Layers, each owning its modes:
//! - [`mode`]: the catalogue (name, rule, description);
//! - [`corpus`]: what is served — a built-in corpus (unnamed files on
//!   Linux, a scratch folder elsewhere), or a `--dir` folder — re-read from
//!   disk on every request (F5);
//! - [`relevance`]: deterministic scoring, the embedding space (E1), anchors (G4);
//! - [`handshake`]: the announcement and the modes that lie in it;
//! - [`sabotage`]: the answer-level lies (B1, B3, B4, F1–F5, D1, Q1, `as_of`, U2);
//! - [`verify`]: honest revalidation and its two broken forms (V1, V2);
//! - [`baseline`]: the faults combined modes lay under a second one, so a
//!   checker can prove one fault never masks another;
//! - [`engine`]: the above joined, without a transport;
//! - [`serve`](mod@serve): the protocol loop on the codec (not the SDK runner, which
//!   would refuse to lie) and the wire-level modes;
//! - [`lifecycle`], [`app`]: the scratch folder and the ways the process ends;
//! - [`program`]: the whole program as a function, for a `[[bin]]` in any crate
//!   whose tests spawn the fixture.
//!
//! # Driving it from another crate's tests
//!
//! Spawn the binary ([`binary_path`] finds it once built) with `--mode`, or
//! have a test binary re-run itself and call [`run`] in the child. Iterate
//! [`Mode::ALL`]; [`Mode::rule`] says which check must fire for each, and
//! [`Mode::is_conformant`] which modes a correct suite must accept.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod app;
pub mod baseline;
pub mod corpus;
pub mod engine;
pub mod handshake;
pub mod lifecycle;
pub mod mode;
pub mod options;
pub mod program;
pub mod relevance;
pub mod sabotage;
pub mod serve;
#[cfg(target_os = "linux")]
pub mod unnamed;
pub mod verify;

pub use app::{binary_path, run, BINARY_ENV};
pub use corpus::{Corpus, CorpusError};
pub use engine::Engine;
pub use lifecycle::Lifecycle;
pub use mode::{Baseline, Mode, UnknownMode};
pub use options::{
    parse_args, usage, Command, Options, UsageError, BIN_NAME, DEFAULT_DELAY_MS, PROVIDER_NAME,
};
pub use relevance::{is_anchored, EMBEDDINGS_FINGERPRINT, EMBEDDING_DIMENSIONS};
pub use serve::{serve, Outcome, EXIT_CRASH};
