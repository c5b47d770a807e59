//! The docs provider, as shipped, on a folder of Markdown: green under
//! `--strict`, with only the checks its capabilities do not call for (no
//! graph, no embedding space) listed as not applicable.

use crate::suite as common;

use contextgraph_conformance::{run_suite, Status, Target};

#[test]
fn the_docs_provider_is_green_under_strict() {
    let folder = common::markdown_folder();
    let target = Target::stdio(common::docs_binary(), [folder.path()]);
    let report = run_suite(&target, &common::options());
    assert!(report.passed(), "{}", report.render_text());
    assert_eq!(report.summary.skipped, 0);
    let na: Vec<&str> = report
        .not_applicable
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(
        na,
        ["anchor-relevance", "embedding-fingerprint"],
        "{}",
        report.render_text()
    );
    for name in [
        "file-provenance",
        "verify-honesty",
        "correlation",
        "as-of",
        "budget-honesty",
    ] {
        assert_eq!(
            report.check(name).map(|c| c.status),
            Some(Status::Pass),
            "{name}"
        );
    }
    eprintln!("{}", report.render_text());
}
