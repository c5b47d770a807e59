//! A provider that returns no frames cannot pass the frame checks
//! vacuously: they are `skipped` with the reason, which a strict run
//! counts as a failure while a lax run does not.

use crate::suite as common;

use contextgraph_conformance::{run_suite, Status, Target};

#[test]
fn frame_checks_are_skipped_when_no_frames_come_back_and_strict_fails() {
    let folder = common::markdown_folder();
    let target = Target::stdio(common::docs_binary(), [folder.path()]);
    let mut options = common::options();
    options.goals = vec!["xyzzy plugh frobozz".to_owned()];
    let report = run_suite(&target, &options);
    for name in [
        "frame-validity",
        "budget-honesty",
        "as-of",
        "file-provenance",
        "verify-honesty",
        "determinism",
    ] {
        let check = report
            .check(name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(
            check.status,
            Status::Skipped,
            "{name}: {:?}",
            check.evidence
        );
        assert!(
            check
                .evidence
                .iter()
                .any(|e| e.contains("no frames") || e.contains("nothing")),
            "{name} does not say why: {:?}",
            check.evidence
        );
    }
    assert_eq!(report.summary.failed, 0, "{}", report.render_text());
    assert!(!report.passed(), "strict must fail on skipped checks");
    let lax = run_suite(&target, &options.clone().strict(false));
    assert!(lax.passed(), "{}", lax.render_text());
}
