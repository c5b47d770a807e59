//! Item 4: our host and composer, run against every adversary of the host
//! suite (the stdio ones spawned from this crate's adversary binary),
//! are green under `--strict`, and the report has the documented shape.

use contextgraph_conformance_host::{
    run_host_suite, AdversaryCommand, HostCheckId, HostSuiteOptions, Status, HOST_TARGET,
};
use std::time::Duration;

/// The documented defaults, except deadlines with headroom for a shared,
/// noisy machine (hang guards, not speed assertions): a clean provider
/// gets 2 s to exit, the prompt twins beside a hanging provider 1 s to
/// answer, and the host 5 s past a deadline before "it gave up by the
/// deadline" fails. A host that waits for a silent provider still fails:
/// it never gives up, and is stopped waiting for at the deadline plus slack.
fn options() -> HostSuiteOptions {
    HostSuiteOptions::default()
        .strict(true)
        .with_request_timeout(Duration::from_secs(5))
        .with_hang_deadline(Duration::from_secs(1))
        .with_shutdown_grace(Duration::from_secs(2))
        .with_deadline_slack(Duration::from_secs(5))
        .with_adversary(AdversaryCommand::new(
            env!("CARGO_BIN_EXE_contextgraph-host-adversary"),
            Vec::<&str>::new(),
        ))
}

#[test]
fn host_suite_our_host_tells_every_adversary_from_its_twin_under_strict() {
    let report = run_host_suite(&options());
    assert!(report.passed(), "{}", report.render_text());
    assert_eq!(report.target, HOST_TARGET);
    assert_eq!(report.checks.len(), HostCheckId::ALL.len());
    for c in &report.checks {
        assert_eq!(c.status, Status::Pass, "{}: {:?}", c.name, c.evidence);
        assert!(!c.evidence.is_empty(), "{} has evidence", c.name);
    }
}

#[test]
fn host_suite_json_report_has_the_provider_suite_shape() {
    let report = run_host_suite(&options());
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).expect("JSON");
    assert_eq!(json["target"], "host");
    let checks = json["checks"].as_array().expect("checks");
    for c in checks {
        assert!(c["name"].is_string() && c["anchors"].is_array() && c["evidence"].is_array());
        assert!(["pass", "fail", "skipped"].contains(&c["status"].as_str().unwrap()));
    }
}
