//! The suite reads the spec as written, and says "ambiguous: …" where the
//! text is: each of these modes is green under `--strict`, and the check
//! concerned says why in its evidence (docs/requirements.md records the
//! reading this project follows).

use crate::suite as common;

use contextgraph_conformance::{run_suite, Report, Status, Target};

fn run(mode: &'static str) -> Report {
    run_suite(
        &Target::stdio(common::misbehaving_binary(), ["--mode", mode]),
        &common::options(),
    )
}

fn assert_green_with(report: &Report, check: &str, words: &[&str], ambiguous: usize) {
    let s = common::summary(report);
    assert!(report.passed(), "{}", report.render_text());
    let c = report
        .check(check)
        .unwrap_or_else(|| panic!("{check} did not apply:\n{s}"));
    assert_eq!(c.status, Status::Pass, "{s}");
    assert!(
        c.evidence
            .iter()
            .any(|l| words.iter().all(|w| l.contains(w))),
        "{check} evidence lacks {words:?}:\n{s}"
    );
    assert_eq!(report.summary.ambiguous, ambiguous, "{s}");
    assert_eq!(c.ambiguities().count(), ambiguous, "{s}");
}

#[test]
fn an_ack_in_the_providers_own_version_to_a_foreign_host_is_ambiguous_not_a_failure() {
    let handles = [
        std::thread::spawn(|| run("ack-own-version")),
        std::thread::spawn(|| run("own-name-verify")),
        std::thread::spawn(|| run("anchored-low-score")),
    ];
    let [version, verify, anchors] = handles.map(|h| h.join().expect("a suite run panicked"));
    assert_green_with(
        &version,
        "version-mismatch",
        &["ambiguous: ", "H1", "H3"],
        1,
    );
    assert_green_with(
        &verify,
        "verify-honesty",
        &["ambiguous: ", "host's label", "unknown"],
        1,
    );
    assert_green_with(
        &anchors,
        "anchor-relevance",
        &["listed first", "list order"],
        0,
    );
}
