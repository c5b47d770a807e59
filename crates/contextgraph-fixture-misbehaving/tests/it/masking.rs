//! One fault never masks another: a provider with a baseline fault *and* a
//! second fault gets both reported, and its report differs from the
//! baseline's alone. The baselines are what other implementations do
//! throughout their answers (a placeholder `content_digest`, ranges past the
//! end of the file); the second faults are the ones a suite that stopped at
//! the baseline problem used to miss (rubber-stamp verify, hollow verify, a
//! stale provenance digest).

use crate::suite as common;

use contextgraph_conformance::{run_suite, CheckReport, Report, Status, Target};

fn run(modes: &[&'static str]) -> Vec<(&'static str, Report)> {
    let handles: Vec<_> = modes
        .iter()
        .map(|mode| {
            let mode = *mode;
            std::thread::spawn(move || {
                let target = Target::stdio(common::misbehaving_binary(), ["--mode", mode]);
                (mode, run_suite(&target, &common::options()))
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("a suite run panicked"))
        .collect()
}

fn check<'r>(report: &'r Report, name: &str) -> &'r CheckReport {
    report
        .check(name)
        .unwrap_or_else(|| panic!("{name} did not apply:\n{}", common::summary(report)))
}

/// Whether a failing line of `check` contains every one of `words`.
fn fails_with(check: &CheckReport, words: &[&str]) -> bool {
    check.status == Status::Fail
        && check
            .evidence
            .iter()
            .any(|l| l.starts_with("✗ ") && words.iter().all(|w| l.contains(w)))
}

#[test]
fn a_placeholder_digest_does_not_hide_a_rubber_stamp_or_hollow_verify() {
    let reports = run(&[
        "placeholder-digest",
        "placeholder-digest+rubber-stamp-verify",
        "placeholder-digest+hollow-verify",
    ]);
    let [(_, alone), (_, rubber), (_, hollow)] = &reports[..] else {
        unreachable!()
    };
    // The baseline alone: D1 reported, verify judged on the declared digests and passed.
    assert!(
        fails_with(check(alone, "frame-validity"), &["D1"]),
        "{}",
        common::summary(alone)
    );
    assert_eq!(
        check(alone, "verify-honesty").status,
        Status::Pass,
        "{}",
        common::summary(alone)
    );
    // Both faults reported in each combination.
    for (report, words) in [
        (rubber, &["V1", "never served", "valid"][..]),
        (hollow, &["V2", "got no verdict"][..]),
    ] {
        let s = common::summary(report);
        assert!(fails_with(check(report, "frame-validity"), &["D1"]), "{s}");
        assert!(fails_with(check(report, "verify-honesty"), words), "{s}");
        assert_ne!(common::failed(report), common::failed(alone), "{s}");
    }
}

#[test]
fn a_range_past_the_end_is_a_warning_and_does_not_hide_a_stale_digest() {
    let reports = run(&["range-past-end", "range-past-end+stale-digest"]);
    let [(_, alone), (_, stale)] = &reports[..] else {
        unreachable!()
    };
    // Alone: green under --strict, the range reported as a warning.
    let provenance = check(alone, "file-provenance");
    assert!(alone.passed(), "{}", alone.render_text());
    assert_eq!(provenance.status, Status::Pass);
    assert!(
        provenance
            .warnings()
            .any(|w| w.contains("reaches past the end")),
        "{:?}",
        provenance.evidence
    );
    assert_eq!(alone.summary.with_warnings, 1, "{}", common::summary(alone));
    // Combined: the warning *and* the stale digest, re-hashed over the clipped bytes.
    let provenance = check(stale, "file-provenance");
    assert!(
        provenance
            .warnings()
            .any(|w| w.contains("reaches past the end")),
        "{:?}",
        provenance.evidence
    );
    assert!(
        fails_with(provenance, &["hash to"]),
        "{:?}",
        provenance.evidence
    );
    assert_eq!(
        common::failed(stale),
        ["file-provenance"],
        "{}",
        common::summary(stale)
    );
}
