//! [`run_suite`]: connect, run every check, assemble the [`Report`].
//!
//! Three connections, run concurrently: the main session (handshake and
//! every query/verify check, in a fixed order, then `shutdown`), one for
//! the version mismatch and malformed input, and, for a process target, one
//! for the shutdown check. Checks on the main session run one request at a
//! time except the correlation burst; a fast provider is done in well under
//! a second.

use std::collections::BTreeMap;
use std::thread;
use std::time::Instant;

use crate::checks::robustness::{self, RobustnessOutcome, ShutdownOutcome};
use crate::checks::{
    answers, correlation, embedding, handshake, provenance, verify, CheckId, Kind, Main, Outcome,
};
use crate::probe::{Probe, WireLog};
use crate::report::{CheckReport, NotApplicable, ProviderSummary, Report, Status};
use crate::{SuiteOptions, Target};

type MainCheck = fn(&mut Main<'_>) -> Outcome;

/// The main session's checks, in the order they run (which is not report
/// order: frame validity and provenance judge everything served before them).
const MAIN_ORDER: [(CheckId, MainCheck); 15] = [
    (CheckId::Handshake, handshake::handshake),
    (CheckId::ConsentScope, handshake::consent_scope),
    (CheckId::QueryAnswered, answers::query_answered),
    (CheckId::BudgetHonesty, answers::budget_honesty),
    (CheckId::KindsFilter, answers::kinds_filter),
    (CheckId::AsOf, answers::as_of),
    (CheckId::AnchorRelevance, answers::anchor_relevance),
    (
        CheckId::EmbeddingFingerprint,
        embedding::embedding_fingerprint,
    ),
    (CheckId::UnknownMembers, answers::unknown_members),
    (CheckId::Determinism, answers::determinism),
    // Before the correlation burst, whose malformed query may end a
    // provider (and with it the scratch files its provenance names).
    (CheckId::FileProvenance, provenance::file_provenance),
    (CheckId::VerifyHonesty, verify::verify_honesty),
    (CheckId::Correlation, correlation::correlation),
    (CheckId::FrameValidity, answers::frame_validity),
    (CheckId::Representations, handshake::representations),
];

struct MainOutcome {
    results: Vec<(CheckId, Outcome, u64)>,
    provider: Option<ProviderSummary>,
    wire: WireLog,
}

fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn main_session(target: &Target, options: &SuiteOptions) -> MainOutcome {
    let (probe, no_probe) = match target.connect(options) {
        Ok(channel) => (Some(Probe::new(channel, options.request_timeout)), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let mut m = Main {
        probe,
        no_probe,
        ack: None,
        no_ack: None,
        options,
        baseline: None,
        served: Vec::new(),
    };
    let mut results = Vec::with_capacity(MAIN_ORDER.len());
    for (id, check) in MAIN_ORDER {
        let started = Instant::now();
        let outcome = check(&mut m);
        results.push((id, outcome, millis(started)));
    }
    let provider = m.ack.as_ref().map(|a| ProviderSummary {
        name: a.provider.name.clone(),
        version: a.provider.version.clone(),
        protocol_version: a.protocol_version.clone(),
    });
    let wire = match m.probe.as_mut() {
        Some(p) => {
            let _ = p.shutdown(options.shutdown_grace);
            p.wire.clone()
        }
        None => WireLog::default(),
    };
    MainOutcome {
        results,
        provider,
        wire,
    }
}

/// Run every check against `target` and report.
///
/// Never panics on anything the provider does; a check that could not run
/// is `skipped` with the reason.
pub fn run_suite(target: &Target, options: &SuiteOptions) -> Report {
    let started = Instant::now();
    let (main, robust, shut) = thread::scope(|s| {
        let robust = s.spawn(|| robustness::robustness(target, options));
        let shut = s.spawn(|| robustness::shutdown(target, options));
        let main = main_session(target, options);
        let panicked =
            || Outcome::fail("the check panicked; this is a bug in the conformance suite");
        let robust = robust.join().unwrap_or_else(|_| RobustnessOutcome {
            version_mismatch: panicked(),
            malformed: panicked(),
            wire: WireLog::default(),
            version_ms: 0,
            malformed_ms: 0,
        });
        let shut = shut.join().unwrap_or_else(|_| ShutdownOutcome {
            shutdown: panicked(),
            wire: WireLog::default(),
            ms: 0,
        });
        (main, robust, shut)
    });
    let mut wire = WireLog::default();
    wire.merge(&main.wire, "main connection");
    wire.merge(&robust.wire, "malformed-input connection");
    wire.merge(&shut.wire, "shutdown connection");
    let framing = if main.provider.is_some() {
        robustness::wire_framing(&wire)
    } else {
        Outcome::skipped("no handshake_ack, so no session to judge")
    };
    let mut by_id: BTreeMap<CheckId, (Outcome, u64)> = main
        .results
        .into_iter()
        .map(|(id, o, ms)| (id, (o, ms)))
        .collect();
    by_id.insert(
        CheckId::VersionMismatch,
        (robust.version_mismatch, robust.version_ms),
    );
    by_id.insert(
        CheckId::MalformedInput,
        (robust.malformed, robust.malformed_ms),
    );
    by_id.insert(CheckId::Shutdown, (shut.shutdown, shut.ms));
    by_id.insert(CheckId::WireFraming, (framing, 0));
    let mut checks = Vec::new();
    let mut not_applicable = Vec::new();
    for id in CheckId::ALL {
        let Some((outcome, duration_ms)) = by_id.remove(&id) else {
            continue;
        };
        let anchors = id.anchors().iter().map(|a| (*a).to_owned()).collect();
        let status = match outcome.kind {
            Kind::Pass => Status::Pass,
            Kind::Fail => Status::Fail,
            Kind::Skipped => Status::Skipped,
            Kind::NotApplicable => {
                not_applicable.push(NotApplicable {
                    name: id.name().to_owned(),
                    anchors,
                    reason: outcome.evidence.join("; "),
                });
                continue;
            }
        };
        checks.push(CheckReport {
            name: id.name().to_owned(),
            status,
            anchors,
            evidence: outcome.evidence,
            duration_ms,
        });
    }
    Report::new(
        target.describe(),
        main.provider,
        options.strict,
        millis(started),
        checks,
        not_applicable,
    )
}
