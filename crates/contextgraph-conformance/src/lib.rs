//! The Context Graph Protocol conformance suite: a small, strict host that
//! spawns a provider (stdio) or calls it (HTTP), runs every check its
//! declared capabilities call for, and reports each check with its evidence.
//!
//! "Conformant" means green on this suite for the provider's declared
//! capabilities (REQUIREMENTS §5). A suite that only ever passes proves
//! nothing, so each check is paired with a mode of the misbehaving provider
//! that it must catch (`contextgraph-fixture-misbehaving`'s
//! `tests/it/suite_catches_every_mode.rs`), and combined modes prove that
//! one fault never masks another (`tests/it/masking.rs` there).
//!
//! # Reading the spec as written
//!
//! Where the protocol's text leaves a choice open, a check reports the
//! behaviour as `ambiguous: …` with both readings instead of failing it;
//! something worth fixing that the text does not make a failure is a
//! `warning: …`. Neither fails a run, strict or not. The readings this
//! project follows are recorded in `docs/requirements.md` (H3, F5, G4, V2).
//!
//! ```no_run
//! use contextgraph_conformance::{run_suite, SuiteOptions, Target};
//!
//! let target = Target::stdio("contextgraph-provider-docs", ["./docs"]);
//! let report = run_suite(&target, &SuiteOptions::default().strict(true));
//! print!("{}", report.render_text());
//! std::process::exit(if report.passed() { 0 } else { 1 });
//! ```
//!
//! # Layers
//!
//! - [`target`]: how bytes reach the provider — a child process on pipes
//!   (bounded stderr capture, kill on drop) or, with feature `http`, one
//!   POST per envelope. Transport only, no rules.
//! - [`probe`]: the suite's host side of one connection: requests with
//!   deadlines, correlation ids, and a log of everything on the wire that was
//!   not a reply (garbage, oversized lines, notifications).
//! - [`checks`]: the catalogue ([`CheckId`]: name, anchors, what it proves)
//!   and the checks themselves. Rules are not reimplemented here: frame and
//!   answer rules come from `contextgraph_types` validation, digests and
//!   file ranges from the provider SDK.
//! - [`suite`]: [`run_suite`], which connects (one connection for most
//!   checks, separate ones for malformed input and shutdown, run
//!   concurrently) and assembles the [`Report`].
//! - [`report`]: the serde [`Report`] and its text rendering.
//! - [`outcome`]: how one check ended ([`Outcome`], [`Evidence`]), shared
//!   with the host suite.
//!
//! The other direction, this project's host and composer against
//! adversarial providers (`cgp inspect host`), is the separate crate
//! `contextgraph-conformance-host`: this crate needs no async runtime and
//! no host, so a provider author can depend on it alone.
//!
//! # Timeouts
//!
//! Every request waits at most [`SuiteOptions::request_timeout`] (2 s by
//! default); a provider gets [`SuiteOptions::shutdown_grace`] (1.5 s) to exit
//! after `shutdown`, after which it is killed and the check fails. A
//! connection whose provider stopped answering is not used again: the check
//! that hit the silence fails, later checks on that connection are skipped
//! with the reason, so a hanging provider is reported within a few timeouts,
//! never after minutes.
//!
//! # Cargo features
//!
//! - `http` (default): the HTTP target, with an optional bearer token
//!   (redacted everywhere, C8) and extra trusted CA certificates
//!   ([`Target::http_with`], [`HttpTargetOptions`]).

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod checks;
pub mod options;
pub mod outcome;
pub mod probe;
pub mod report;
pub mod suite;
pub mod target;
pub mod text;

pub use checks::CheckId;
pub use options::SuiteOptions;
pub use outcome::{Evidence, Kind, Outcome};
pub use report::{
    CheckReport, NotApplicable, ProviderSummary, Report, Status, Summary, Verdict, HOST_TARGET,
};
pub use suite::run_suite;
#[cfg(feature = "http")]
pub use target::http::{BearerToken, BearerTokenError, CaCertError, HttpTargetOptions};
pub use target::{Target, TargetError};
