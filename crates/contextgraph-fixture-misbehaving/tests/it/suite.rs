//! Helpers of the tests that run the provider conformance suite
//! (`contextgraph-conformance`) against this fixture: the suite must catch
//! every misbehaviour and pass the normal mode. They live here, beside the
//! fixture's `[[bin]]`, so the binary is found through `CARGO_BIN_EXE`.

use std::path::PathBuf;
use std::time::Duration;

use contextgraph_conformance::{Report, Status, SuiteOptions};

/// The misbehaving provider binary.
pub fn misbehaving_binary() -> PathBuf {
    PathBuf::from(crate::common::BIN)
}

/// Suite options for tests: the documented defaults, except a request
/// timeout with headroom for a shared, noisy machine (a hang guard, not a
/// speed assertion).
pub fn options() -> SuiteOptions {
    SuiteOptions::default()
        .strict(true)
        .with_request_timeout(Duration::from_secs(5))
        .with_shutdown_grace(Duration::from_secs(3))
}

/// One line per check (`name status`), for assertion messages.
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    for c in &report.checks {
        out.push_str(&format!(
            "{} {:?}: {}\n",
            c.name,
            c.status,
            c.evidence.join(" | ")
        ));
    }
    for n in &report.not_applicable {
        out.push_str(&format!("{} n/a: {}\n", n.name, n.reason));
    }
    out
}

/// The names of failed checks.
pub fn failed(report: &Report) -> Vec<String> {
    report
        .names_with(Status::Fail)
        .into_iter()
        .map(str::to_owned)
        .collect()
}
