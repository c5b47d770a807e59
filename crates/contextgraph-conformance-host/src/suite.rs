//! The host suite's catalogue ([`HostCheckId`]), options, and the runner
//! ([`run_host_suite`]) that runs every check concurrently and assembles
//! the report.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use contextgraph_host::StdioCommand;
use contextgraph_types::PROTOCOL_VERSION;

use contextgraph_conformance::outcome::{Evidence, Kind, Outcome};
use contextgraph_conformance::report::{CheckReport, ProviderSummary, Report, Status, HOST_TARGET};

use crate::seen::Seen;
use crate::stdio_adversary::{ADVERSARY_ENV, ADVERSARY_ENV_VALUE};
use crate::{compose_checks, consent, inprocess, peer, stdio};

/// Every host check, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum HostCheckId {
    /// H1/H3: a foreign family is refused, another minor of ours accepted.
    VersionReject,
    /// H2: an empty name or version is refused.
    IdentityReject,
    /// B1–B3: over-budget answers and lying costs are quarantined whole (B2).
    BudgetDrop,
    /// B4: more frames than `max_frames` are quarantined whole.
    FrameLimit,
    /// C1, C2: an egress provider gets nothing until a grant for its exact version.
    ConsentGate,
    /// C6: off-machine scopes need a live receipt each; receipts record scope and version.
    ScopeReceipt,
    /// D1, F5: digests recomputed; a lying digest is dropped.
    ProvenanceBytes,
    /// U2: an unknown kind is dropped alone, the rest accepted.
    UnknownKind,
    /// R3: provider content cannot close its fence or forge a sibling.
    ContentQuoting,
    /// §4.6: every offered frame has an audit entry with its reason.
    CompositionAudit,
    /// A provider crashing mid-query loses nobody else's frames.
    CrashIsolation,
    /// §1, U1: garbage, blank, oversized and unknown-type lines are survived.
    WireNoise,
    /// H4: a wrong or missing id is a prompt typed error.
    CorrelationIds,
    /// H4 lock-step: no id sent; a late reply never answers the next request.
    LockstepResync,
    /// Deadlines: a hanging provider times out by the deadline.
    HangTimeout,
    /// Line cap: an endless line is bounded and does not wedge the host.
    LineCap,
    /// R2: shutdown lets a clean provider exit and kills one that hangs.
    Shutdown,
}

impl HostCheckId {
    /// Every check, in report order.
    pub const ALL: [HostCheckId; 17] = [
        HostCheckId::VersionReject,
        HostCheckId::IdentityReject,
        HostCheckId::BudgetDrop,
        HostCheckId::FrameLimit,
        HostCheckId::ConsentGate,
        HostCheckId::ScopeReceipt,
        HostCheckId::ProvenanceBytes,
        HostCheckId::UnknownKind,
        HostCheckId::ContentQuoting,
        HostCheckId::CompositionAudit,
        HostCheckId::CrashIsolation,
        HostCheckId::WireNoise,
        HostCheckId::CorrelationIds,
        HostCheckId::LockstepResync,
        HostCheckId::HangTimeout,
        HostCheckId::LineCap,
        HostCheckId::Shutdown,
    ];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            HostCheckId::VersionReject => "version-reject",
            HostCheckId::IdentityReject => "identity-reject",
            HostCheckId::BudgetDrop => "budget-drop",
            HostCheckId::FrameLimit => "frame-limit",
            HostCheckId::ConsentGate => "consent-gate",
            HostCheckId::ScopeReceipt => "scope-receipt",
            HostCheckId::ProvenanceBytes => "provenance-bytes",
            HostCheckId::UnknownKind => "unknown-kind",
            HostCheckId::ContentQuoting => "content-quoting",
            HostCheckId::CompositionAudit => "composition-audit",
            HostCheckId::CrashIsolation => "crash-isolation",
            HostCheckId::WireNoise => "wire-noise",
            HostCheckId::CorrelationIds => "correlation-ids",
            HostCheckId::LockstepResync => "lockstep-resync",
            HostCheckId::HangTimeout => "hang-timeout",
            HostCheckId::LineCap => "line-cap",
            HostCheckId::Shutdown => "shutdown",
        }
    }

    /// The check called `name`.
    pub fn from_name(name: &str) -> Option<HostCheckId> {
        HostCheckId::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The requirement anchors (or rule labels) the check covers.
    pub fn anchors(self) -> &'static [&'static str] {
        match self {
            HostCheckId::VersionReject => &["H1", "H3"],
            HostCheckId::IdentityReject => &["H2"],
            HostCheckId::BudgetDrop => &["B1", "B2", "B3"],
            HostCheckId::FrameLimit => &["B2", "B4"],
            HostCheckId::ConsentGate => &["C1", "C2"],
            HostCheckId::ScopeReceipt => &["C6"],
            HostCheckId::ProvenanceBytes => &["D1", "F5"],
            HostCheckId::UnknownKind => &["U2"],
            HostCheckId::ContentQuoting => &["R3"],
            HostCheckId::CompositionAudit => &["B2", "§4"],
            HostCheckId::CrashIsolation => &["crash"],
            HostCheckId::WireNoise => &["§1", "U1"],
            HostCheckId::CorrelationIds => &["H4"],
            HostCheckId::LockstepResync => &["H4", "lock-step"],
            HostCheckId::HangTimeout => &["deadline"],
            HostCheckId::LineCap => &["line-cap"],
            HostCheckId::Shutdown => &["R2"],
        }
    }

    /// Whether the check needs a stdio adversary process.
    pub fn needs_process(self) -> bool {
        matches!(
            self,
            HostCheckId::CrashIsolation
                | HostCheckId::WireNoise
                | HostCheckId::CorrelationIds
                | HostCheckId::LineCap
                | HostCheckId::Shutdown
        )
    }
}

/// How to start a stdio adversary: a program serving
/// [`serve_adversary`](crate::serve_adversary) given `--mode <mode> --name
/// <name>` after `args`, with `env` set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdversaryCommand {
    /// The program.
    pub program: PathBuf,
    /// Arguments before the adversary's own flags.
    pub args: Vec<OsString>,
    /// Environment variables set on the child.
    pub env: Vec<(OsString, OsString)>,
}

impl AdversaryCommand {
    /// `program args…` followed by the adversary's flags: this crate's
    /// `contextgraph-host-adversary` binary, or any program with the same
    /// flags (the misbehaving test fixture has them too).
    pub fn new<I, A>(program: impl Into<PathBuf>, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        AdversaryCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// `program` re-run as an adversary: [`ADVERSARY_ENV`] is set on the
    /// child, so a binary whose `main` starts with
    /// [`adversary_requested`](crate::adversary_requested) serves one
    /// (how `cgp inspect host` runs the suite with nothing but itself).
    pub fn reexec(program: impl Into<PathBuf>) -> Self {
        AdversaryCommand {
            program: program.into(),
            args: Vec::new(),
            env: vec![(ADVERSARY_ENV.into(), ADVERSARY_ENV_VALUE.into())],
        }
    }

    /// The command for one adversary.
    pub(crate) fn command(&self, mode: &str, name: &str, extra: &[&str]) -> StdioCommand {
        let mut command = StdioCommand::new(&self.program)
            .args(&self.args)
            .args(["--mode", mode, "--name", name])
            .args(extra);
        for (key, value) in &self.env {
            command = command.env(key, value);
        }
        command
    }
}

/// Options of a host suite run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HostSuiteOptions {
    /// How to start stdio adversaries; `None` skips the checks needing them.
    pub adversary: Option<AdversaryCommand>,
    /// Deadline of the requests that should succeed (and of handshakes).
    pub request_timeout: Duration,
    /// The deadline given to requests meant to time out (hang, endless line).
    pub hang_deadline: Duration,
    /// Grace period the host gives a provider to exit after `shutdown`.
    pub shutdown_grace: Duration,
    /// How far past a deadline (or the shutdown grace) the host may return
    /// before "the host gave up by the deadline" fails. It absorbs the
    /// machine's scheduling, not the host's patience: a host that waits for
    /// a silent provider instead of its deadline is over it by whole
    /// seconds, and one that never gives up is stopped waiting for at the
    /// deadline plus this slack and fails too. Tests on shared machines pass
    /// a few seconds.
    pub deadline_slack: Duration,
    /// A skipped check fails the run too.
    pub strict: bool,
}

impl Default for HostSuiteOptions {
    fn default() -> Self {
        HostSuiteOptions {
            adversary: None,
            request_timeout: Duration::from_secs(2),
            hang_deadline: Duration::from_millis(300),
            shutdown_grace: Duration::from_millis(500),
            deadline_slack: Duration::from_millis(1500),
            strict: false,
        }
    }
}

impl HostSuiteOptions {
    /// Set strictness.
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Use `adversary` for the stdio checks.
    #[must_use]
    pub fn with_adversary(mut self, adversary: AdversaryCommand) -> Self {
        self.adversary = Some(adversary);
        self
    }

    /// Set the deadline of requests meant to succeed.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Set the deadline of the fan-outs meant to time out a provider (the
    /// prompt twin beside it must answer within it too).
    #[must_use]
    pub fn with_hang_deadline(mut self, deadline: Duration) -> Self {
        self.hang_deadline = deadline;
        self
    }

    /// Set the grace period the host gives a provider to exit after `shutdown`.
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Set how far past a deadline the host may return (see
    /// [`deadline_slack`](Self::deadline_slack)).
    #[must_use]
    pub fn with_deadline_slack(mut self, slack: Duration) -> Self {
        self.deadline_slack = slack;
        self
    }
}

/// Record of a twin/adversary pair in a check's evidence: the twin must
/// satisfy `twin_ok`, the adversary `caught`, each with the host's outcome
/// quoted.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pair(
    e: &mut Evidence,
    twin_name: &str,
    twin: &Seen,
    twin_ok: impl Fn(&Seen) -> bool,
    twin_expect: &str,
    adversary_name: &str,
    adversary: &Seen,
    caught: impl Fn(&Seen) -> bool,
    caught_expect: &str,
) {
    if twin_ok(twin) {
        e.note(format!("twin {twin_name}: {twin}"));
    } else {
        e.fail(format!(
            "twin {twin_name}: {twin}; a correct host {twin_expect}"
        ));
    }
    if caught(adversary) {
        e.note(format!("adversary {adversary_name}: {adversary}"));
    } else {
        e.fail(format!(
            "adversary {adversary_name}: {adversary}; a correct host {caught_expect}"
        ));
    }
}

/// The milliseconds since `started`.
fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

async fn run_check(id: HostCheckId, options: Arc<HostSuiteOptions>) -> Outcome {
    if id.needs_process() && options.adversary.is_none() {
        return Outcome::skipped(
            "no stdio adversary program was given (cgp inspect host provides its own; a library caller passes HostSuiteOptions::with_adversary)",
        );
    }
    match id {
        HostCheckId::VersionReject => inprocess::version_reject(&options).await,
        HostCheckId::IdentityReject => inprocess::identity_reject(),
        HostCheckId::BudgetDrop => inprocess::budget_drop(&options).await,
        HostCheckId::FrameLimit => inprocess::frame_limit(&options).await,
        HostCheckId::ConsentGate => consent::consent_gate(&options).await,
        HostCheckId::ScopeReceipt => consent::scope_receipt(&options).await,
        HostCheckId::ProvenanceBytes => compose_checks::provenance_bytes(&options).await,
        HostCheckId::UnknownKind => inprocess::unknown_kind(&options).await,
        HostCheckId::ContentQuoting => compose_checks::content_quoting(&options).await,
        HostCheckId::CompositionAudit => compose_checks::composition_audit(&options).await,
        HostCheckId::LockstepResync => peer::lockstep_resync(&options).await,
        HostCheckId::CrashIsolation => stdio::crash_isolation(&options).await,
        HostCheckId::WireNoise => stdio::wire_noise(&options).await,
        HostCheckId::CorrelationIds => stdio::correlation_ids(&options).await,
        HostCheckId::HangTimeout => peer::hang_timeout(&options).await,
        HostCheckId::LineCap => stdio::line_cap(&options).await,
        HostCheckId::Shutdown => stdio::shutdown(&options).await,
    }
}

/// Run every host check and report. Checks run concurrently on a private
/// tokio runtime; a check that panics is reported as failed, never aborts
/// the run.
pub fn run_host_suite(options: &HostSuiteOptions) -> Report {
    let started = Instant::now();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let checks = HostCheckId::ALL
                .iter()
                .map(|id| {
                    report_of(
                        *id,
                        Outcome::fail(format!("cannot start a tokio runtime for the host ({e})")),
                        0,
                    )
                })
                .collect();
            return assemble(options, started, checks);
        }
    };
    let options = Arc::new(options.clone());
    let results = runtime.block_on(async {
        let mut handles = Vec::with_capacity(HostCheckId::ALL.len());
        for id in HostCheckId::ALL {
            let options = Arc::clone(&options);
            handles.push((
                id,
                tokio::spawn(async move {
                    let t = Instant::now();
                    let outcome = run_check(id, options).await;
                    (outcome, millis(t))
                }),
            ));
        }
        let mut results = Vec::with_capacity(handles.len());
        for (id, handle) in handles {
            let (outcome, ms) = handle.await.unwrap_or_else(|_| {
                (
                    Outcome::fail("the check panicked; this is a bug in the host suite"),
                    0,
                )
            });
            results.push(report_of(id, outcome, ms));
        }
        results
    });
    // Children killed on drop are reaped by the runtime; give it no chance
    // to block the caller on a stuck task.
    runtime.shutdown_timeout(Duration::from_millis(200));
    assemble(&options, started, results)
}

fn report_of(id: HostCheckId, outcome: Outcome, duration_ms: u64) -> CheckReport {
    let status = match outcome.kind {
        Kind::Pass => Status::Pass,
        Kind::Fail => Status::Fail,
        Kind::Skipped | Kind::NotApplicable => Status::Skipped,
    };
    CheckReport {
        name: id.name().to_owned(),
        status,
        anchors: id.anchors().iter().map(|a| (*a).to_owned()).collect(),
        evidence: outcome.evidence,
        duration_ms,
    }
}

fn assemble(options: &HostSuiteOptions, started: Instant, checks: Vec<CheckReport>) -> Report {
    Report::new(
        HOST_TARGET.to_owned(),
        Some(ProviderSummary {
            name: "contextgraph-host + contextgraph-compose".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            protocol_version: PROTOCOL_VERSION.to_owned(),
        }),
        options.strict,
        millis(started),
        checks,
        Vec::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_catalogue_is_consistent() {
        for c in HostCheckId::ALL {
            assert_eq!(HostCheckId::from_name(c.name()), Some(c));
            assert!(!c.anchors().is_empty(), "{c:?}");
        }
        let mut names: Vec<_> = HostCheckId::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), HostCheckId::ALL.len());
    }

    #[test]
    fn pair_fails_when_the_host_cannot_tell_twin_from_adversary() {
        let accepted = Seen::Accepted {
            ids: vec!["a".into()],
            dropped_kinds: vec![],
        };
        let mut e = Evidence::default();
        pair(
            &mut e,
            "t",
            &accepted,
            Seen::accepted_some,
            "accepts it",
            "a",
            &accepted,
            |s| s.quarantined_for("B3"),
            "quarantines it",
        );
        assert_eq!(e.finish().kind, Kind::Fail);
    }

    #[test]
    fn without_an_adversary_program_the_process_checks_are_skipped_not_passed() {
        let report = run_host_suite(&HostSuiteOptions::default().strict(true));
        for id in HostCheckId::ALL.into_iter().filter(|c| c.needs_process()) {
            let c = report.check(id.name()).expect("reported");
            assert_eq!(c.status, Status::Skipped, "{}", c.name);
        }
        assert!(!report.passed(), "strict: a skip fails the run");
        assert_eq!(report.target, HOST_TARGET);
    }
}
