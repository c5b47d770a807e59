//! A suite that only ever passes proves nothing (REQUIREMENTS §5): run it
//! against every mode of the misbehaving provider and assert that each
//! misbehaviour is caught by the check meant to catch it (and by no check
//! its one fault does not explain), that the run fails, and that the conformant modes are green under `--strict`.
//!
//! The modes run in parallel threads (a few at a time, the machine is
//! shared); each run is one suite execution with its three connections.

use crate::suite as common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use contextgraph_conformance::{run_suite, CheckId, Report, SuiteOptions, Target};
use contextgraph_fixture_misbehaving::Mode;

/// The checks that must fail for each non-conformant mode.
fn expected(mode: Mode) -> &'static [CheckId] {
    use CheckId as C;
    match mode {
        Mode::LyingCost | Mode::UnderReportedCost => &[C::BudgetHonesty],
        Mode::FrameFlood | Mode::BudgetOverrun => &[C::BudgetHonesty],
        Mode::BadScore
        | Mode::EmptyCitation
        | Mode::EmptyTitle
        | Mode::BadTimestamp
        | Mode::MalformedDigest
        | Mode::DigestMismatch => &[C::FrameValidity],
        Mode::StaleDigest | Mode::RangePastEndStaleDigest => &[C::FileProvenance],
        Mode::PlaceholderDigest => &[C::FrameValidity],
        Mode::PlaceholderDigestRubberStampVerify | Mode::PlaceholderDigestHollowVerify => {
            &[C::FrameValidity, C::VerifyHonesty]
        }
        Mode::IgnoredKinds => &[C::KindsFilter],
        Mode::IgnoredAsOf => &[C::AsOf],
        Mode::IgnoredAnchors => &[C::AnchorRelevance],
        Mode::RubberStampVerify | Mode::HollowVerify => &[C::VerifyHonesty],
        Mode::DroppedId | Mode::WrongId => &[C::Correlation],
        Mode::WrongVersion => &[C::Handshake],
        Mode::EchoVersion => &[C::VersionMismatch],
        Mode::ScopeLie => &[C::ConsentScope],
        Mode::RepresentationLie => &[C::Representations],
        Mode::CrashOnQuery => &[C::QueryAnswered],
        Mode::CrashOnGarbage | Mode::WrongErrorCode => &[C::MalformedInput],
        Mode::HangOnShutdown => &[C::Shutdown],
        Mode::AcceptWrongDimension => &[C::EmbeddingFingerprint],
        Mode::GarbageLines | Mode::StdoutLog => &[C::WireFraming],
        Mode::UnknownKind => &[C::FrameValidity, C::KindsFilter],
        Mode::SlowReply => &[C::Handshake],
        Mode::EndlessLine => &[C::QueryAnswered],
        _ => &[],
    }
}

/// Checks that may also fail for a mode because the same fault shows up
/// there too (each is a true second symptom, not a cascade of the suite):
/// flood/overrun frames carry the one kind a query asked for, an undeclared
/// one included; crash and endless modes also end the malformed-input
/// connection's final query; crash-on-garbage and wrong-error-code also meet
/// the correlation burst's malformed query (and wrong-error-code turns the
/// E1 refusal into `internal`); slow-reply is slow on every connection.
fn also(mode: Mode) -> &'static [CheckId] {
    use CheckId as C;
    match mode {
        Mode::FrameFlood | Mode::BudgetOverrun => &[C::KindsFilter],
        Mode::CrashOnQuery | Mode::EndlessLine => &[C::MalformedInput],
        Mode::CrashOnGarbage => &[C::Correlation],
        Mode::WrongErrorCode => &[C::Correlation, C::EmbeddingFingerprint],
        Mode::SlowReply => &[C::VersionMismatch],
        _ => &[],
    }
}

/// Per-mode arguments and options: `slow-reply` sleeps three times the
/// request timeout, so it is over the deadline whatever the machine's load.
fn setup(mode: Mode) -> (Vec<String>, SuiteOptions) {
    let mut args = vec!["--mode".to_owned(), mode.name().to_owned()];
    let mut options = common::options();
    if mode == Mode::SlowReply {
        args.extend(["--delay-ms".to_owned(), "3000".to_owned()]);
        options = options
            .with_request_timeout(Duration::from_secs(1))
            .with_shutdown_grace(Duration::from_secs(4));
    }
    (args, options)
}

fn run_all() -> BTreeMap<Mode, Report> {
    let bin = common::misbehaving_binary();
    let queue = Arc::new(Mutex::new(Mode::ALL.to_vec()));
    let results = Arc::new(Mutex::new(BTreeMap::new()));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (queue, results, bin) = (Arc::clone(&queue), Arc::clone(&results), bin.clone());
            std::thread::spawn(move || loop {
                let Some(mode) = queue.lock().unwrap().pop() else {
                    return;
                };
                let (args, options) = setup(mode);
                let report = run_suite(&Target::stdio(&bin, args), &options);
                results.lock().unwrap().insert(mode, report);
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker panicked");
    }
    Arc::try_unwrap(results).unwrap().into_inner().unwrap()
}

#[test]
fn every_misbehaviour_is_caught_by_its_check_and_conformant_modes_are_green() {
    let reports = run_all();
    let mut problems = Vec::new();
    for (mode, report) in &reports {
        let failed = common::failed(report);
        if mode.is_conformant() {
            if !report.passed() {
                problems.push(format!(
                    "conformant mode {mode} is not green under --strict:\n{}",
                    common::summary(report)
                ));
            }
            continue;
        }
        let want = expected(*mode);
        assert!(
            !want.is_empty(),
            "mode {mode} has no expected check; add it to `expected`"
        );
        for check in want {
            if !failed.iter().any(|f| f == check.name()) {
                problems.push(format!(
                    "mode {mode} [{}] was not caught by {}; failed: {failed:?}\n{}",
                    mode.rule(),
                    check.name(),
                    common::summary(report)
                ));
            }
        }
        if report.passed() {
            problems.push(format!("mode {mode} got a passing verdict"));
        }
        let unexplained: Vec<_> = failed
            .iter()
            .filter(|f| {
                !want
                    .iter()
                    .chain(also(*mode))
                    .any(|c| c.name() == f.as_str())
            })
            .collect();
        if !unexplained.is_empty() {
            problems.push(format!(
                "mode {mode} [{}] also failed {unexplained:?}, which its one fault does not explain:\n{}",
                mode.rule(),
                common::summary(report)
            ));
        }
    }
    assert_eq!(reports.len(), Mode::ALL.len());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn lockstep_is_green_with_correlation_not_applicable() {
    let (args, options) = setup(Mode::Lockstep);
    let report = run_suite(&Target::stdio(common::misbehaving_binary(), args), &options);
    assert!(report.passed(), "{}", report.render_text());
    assert!(report.check("correlation").is_none());
    assert!(
        report
            .not_applicable
            .iter()
            .any(|n| n.name == "correlation"),
        "{:?}",
        report.not_applicable
    );
}
