//! The host-side conformance suite behind `cgp inspect host`: *our* host
//! (`contextgraph-host`) and composer (`contextgraph-compose`) run against
//! adversarial providers.
//!
//! Every check pairs an adversary with a well-behaved twin and passes only
//! if the host tells them apart: it accepts the twin and rejects, drops or
//! isolates the adversary. A host that rejects everything fails as surely as
//! one that accepts everything. Each check's decision is a pure function of
//! what the host did (`Seen`), unit-tested against broken host
//! behaviour so no check is vacuous.
//!
//! Adversaries come in three kinds:
//! - in-process SDK providers (`adversary`) for the answer-level lies
//!   (budget, frame limit, digests, unknown kinds, injection) and consent;
//! - scripted NDJSON peers on in-memory pipes (`peer`) for the handshake
//!   version rules and lock-step resynchronisation, where the check needs to
//!   see exactly what the host wrote, and deadlines (a peer that goes
//!   silent after the handshake, in a fan-out beside a prompt twin);
//! - child processes ([`stdio_adversary`], embedded in this crate) for the
//!   stdio guarantees (crash, noise, correlation ids, endless line,
//!   shutdown). Their command line is [`HostSuiteOptions::adversary`]: `cgp
//!   inspect host` re-runs its own binary ([`AdversaryCommand::reexec`]; the
//!   child's `main` calls [`serve_adversary`]); this crate's tests spawn its
//!   `contextgraph-host-adversary` binary. Without one, those checks are
//!   `skipped`. The module says why they are embedded rather than taken
//!   from the misbehaving test fixture.
//!
//! The report is the provider suite's [`Report`] with `target` = `"host"`
//! and `provider` naming the host implementation under test.

//! The provider suite (`contextgraph-conformance`) is the other direction
//! and has no host in it; this crate adds the async host, the composer and
//! the adversaries, and reuses that crate's [`Report`] and check outcomes.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod adversary;
mod bridge;
mod compose_checks;
mod consent;
mod inprocess;
mod peer;
mod seen;
mod stdio;
pub mod stdio_adversary;
mod suite;

pub use contextgraph_conformance::{CheckReport, Report, Status, HOST_TARGET};
pub use stdio_adversary::{adversary_requested, serve_adversary};
pub(crate) use suite::pair;
pub use suite::{run_host_suite, AdversaryCommand, HostCheckId, HostSuiteOptions};
