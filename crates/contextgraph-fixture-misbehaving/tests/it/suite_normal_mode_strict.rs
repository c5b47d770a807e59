//! The misbehaving provider's `normal` mode exercises every capability and
//! breaks nothing: the suite must be green on it under `--strict`, with no
//! check skipped and only the checks its capabilities do not call for
//! (none, since it declares everything) listed as not applicable.

use crate::suite as common;

use contextgraph_conformance::{run_suite, Status, Target};

#[test]
fn normal_mode_is_green_under_strict_with_every_check_applicable() {
    let target = Target::stdio(common::misbehaving_binary(), ["--mode", "normal"]);
    let report = run_suite(&target, &common::options());
    assert!(report.passed(), "{}", report.render_text());
    assert_eq!(report.summary.skipped, 0, "{}", common::summary(&report));
    for name in [
        "handshake",
        "budget-honesty",
        "as-of",
        "kinds-filter",
        "anchor-relevance",
        "file-provenance",
        "verify-honesty",
        "correlation",
        "embedding-fingerprint",
        "malformed-input",
        "shutdown",
    ] {
        let check = report
            .check(name)
            .unwrap_or_else(|| panic!("{name} did not apply:\n{}", common::summary(&report)));
        assert_eq!(check.status, Status::Pass, "{name}");
    }
    assert!(
        report.not_applicable.is_empty(),
        "{:?}",
        report.not_applicable
    );
    let provider = report.provider.as_ref().expect("a handshake_ack");
    assert_eq!(provider.name, "misbehaving-provider");
}
