//! The report: serde types (the `--json` shape) and the text rendering.
//!
//! # JSON shape
//!
//! ```json
//! {
//!   "target": "stdio: contextgraph-provider-docs ./docs",
//!   "provider": {"name": "docs", "version": "0.1.0", "protocol_version": "contextgraph/1.0-draft"},
//!   "strict": true,
//!   "verdict": "pass",
//!   "summary": {"passed": 17, "failed": 0, "skipped": 0, "not_applicable": 2,
//!               "with_warnings": 0, "ambiguous": 0},
//!   "duration_ms": 412,
//!   "checks": [
//!     {"name": "handshake", "status": "pass", "anchors": ["H1", "H2", "H3"],
//!      "evidence": ["docs 0.1.0 acknowledged with contextgraph/1.0-draft"], "duration_ms": 3}
//!   ],
//!   "not_applicable": [
//!     {"name": "anchor-relevance", "anchors": ["G4"], "reason": "capabilities.graph is false"}
//!   ]
//! }
//! ```
//!
//! - `status` is `pass`, `fail` or `skipped`; `evidence` is a list of
//!   sentences (what was sent, what came back, which rule it breaks), each
//!   bounded in length, at most [`MAX_EVIDENCE_LINES`] per check.
//! - `provider` is absent when no `handshake_ack` was received. In a host
//!   report (`cgp inspect host`, `target` = `"host"`) it names the host
//!   implementation under test instead, and `not_applicable` is empty.
//! - `not_applicable` lists the checks the provider's declared capabilities
//!   do not call for (e.g. G4 without `graph`); they never fail a run.
//! - An evidence line starting `✗ ` is a failure, `warning: ` something
//!   worth fixing that the protocol's text does not make a failure, and
//!   `ambiguous: ` behaviour one reading of the text allows and another
//!   forbids (the line gives both readings). `summary.with_warnings` and
//!   `summary.ambiguous` count the checks carrying such lines (absent in
//!   reports written before they existed, read as 0).
//! - `verdict` is `fail` when any check failed, or, with `strict`, when any
//!   check was skipped. Warnings and ambiguities never fail a run, strict
//!   or not.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::outcome::{AMBIGUOUS_PREFIX, WARNING_PREFIX};

/// The `target` of a host-suite report (`cgp inspect host`, crate
/// `contextgraph-conformance-host`): its provider line names the host under
/// test instead of a provider.
pub const HOST_TARGET: &str = "host";

/// Most evidence lines kept per check (the rest are summarised in one line).
pub const MAX_EVIDENCE_LINES: usize = 24;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The rule was exercised and held.
    Pass,
    /// The rule was exercised and broken (or the provider crashed or hung).
    Fail,
    /// The rule could not be exercised (no frames to judge, the connection
    /// was lost earlier); the evidence says why. Fails a strict run.
    Skipped,
}

impl Status {
    /// `PASS`, `FAIL`, `SKIP`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skipped => "SKIP",
        }
    }
}

/// One check in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// The check's name (see [`CheckId`](crate::CheckId)).
    pub name: String,
    /// The outcome.
    pub status: Status,
    /// Requirement anchors the check covers.
    pub anchors: Vec<String>,
    /// What was observed.
    pub evidence: Vec<String>,
    /// Time the check took, in milliseconds.
    pub duration_ms: u64,
}

impl CheckReport {
    /// The evidence lines that are warnings (see [`WARNING_PREFIX`]).
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.evidence
            .iter()
            .filter(|l| l.starts_with(WARNING_PREFIX))
            .map(String::as_str)
    }

    /// The evidence lines that report an ambiguity of the protocol's text
    /// (see [`AMBIGUOUS_PREFIX`]).
    pub fn ambiguities(&self) -> impl Iterator<Item = &str> {
        self.evidence
            .iter()
            .filter(|l| l.starts_with(AMBIGUOUS_PREFIX))
            .map(String::as_str)
    }
}

/// A check the provider's declared capabilities do not call for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotApplicable {
    /// The check's name.
    pub name: String,
    /// Requirement anchors it would cover.
    pub anchors: Vec<String>,
    /// Why it does not apply.
    pub reason: String,
}

/// Who answered the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderSummary {
    /// `provider.name`.
    pub name: String,
    /// `provider.version`.
    pub version: String,
    /// The version acknowledged.
    pub protocol_version: String,
}

/// The run's overall outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing failed (and, when strict, nothing was skipped).
    Pass,
    /// Something failed (or, when strict, was skipped).
    Fail,
}

/// Counts per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Checks that passed.
    pub passed: usize,
    /// Checks that failed.
    pub failed: usize,
    /// Checks that were skipped.
    pub skipped: usize,
    /// Checks that do not apply.
    pub not_applicable: usize,
    /// Checks whose evidence carries at least one warning (they pass or
    /// fail on their other lines; a warning never fails a run).
    #[serde(default)]
    pub with_warnings: usize,
    /// Checks whose evidence reports behaviour the protocol's text is
    /// ambiguous about (never a failure).
    #[serde(default)]
    pub ambiguous: usize,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// What was inspected, e.g. `stdio: prog args` or `http: url`.
    pub target: String,
    /// The provider, when it acknowledged the handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderSummary>,
    /// Whether skips count as failures.
    pub strict: bool,
    /// The outcome.
    pub verdict: Verdict,
    /// Counts.
    pub summary: Summary,
    /// Wall time of the whole run, in milliseconds.
    pub duration_ms: u64,
    /// The applicable checks, in catalogue order.
    pub checks: Vec<CheckReport>,
    /// The checks that do not apply, with the reason.
    #[serde(default)]
    pub not_applicable: Vec<NotApplicable>,
}

impl Report {
    /// Assemble a report, computing summary and verdict.
    pub fn new(
        target: String,
        provider: Option<ProviderSummary>,
        strict: bool,
        duration_ms: u64,
        checks: Vec<CheckReport>,
        not_applicable: Vec<NotApplicable>,
    ) -> Self {
        let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
        let summary = Summary {
            passed: count(Status::Pass),
            failed: count(Status::Fail),
            skipped: count(Status::Skipped),
            not_applicable: not_applicable.len(),
            with_warnings: checks
                .iter()
                .filter(|c| c.warnings().next().is_some())
                .count(),
            ambiguous: checks
                .iter()
                .filter(|c| c.ambiguities().next().is_some())
                .count(),
        };
        let failed = summary.failed > 0 || (strict && summary.skipped > 0);
        Report {
            target,
            provider,
            strict,
            verdict: if failed { Verdict::Fail } else { Verdict::Pass },
            summary,
            duration_ms,
            checks,
            not_applicable,
        }
    }

    /// Whether the verdict is `pass`.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// The check called `name`, if it applied.
    pub fn check(&self, name: &str) -> Option<&CheckReport> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// Names of the checks with `status`.
    pub fn names_with(&self, status: Status) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| c.status == status)
            .map(|c| c.name.as_str())
            .collect()
    }

    /// The report as pretty JSON (the documented shape).
    pub fn to_json(&self) -> String {
        // Serializing plain strings, numbers and enums cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The report for a person: one line per check with its evidence
    /// indented under it, the checks that do not apply, then the verdict.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "cgp inspect: {}", self.target);
        match &self.provider {
            Some(p) => {
                let role = if self.target == HOST_TARGET {
                    "host under test"
                } else {
                    "provider"
                };
                let _ = writeln!(
                    out,
                    "{role}: {} {} ({})",
                    p.name, p.version, p.protocol_version
                );
            }
            None => out.push_str("provider: no handshake_ack received\n"),
        }
        out.push('\n');
        for c in &self.checks {
            let _ = writeln!(
                out,
                "{}  {} [{}] ({} ms)",
                c.status.label(),
                c.name,
                c.anchors.join(" "),
                c.duration_ms
            );
            for e in &c.evidence {
                let _ = writeln!(out, "      {e}");
            }
        }
        if !self.not_applicable.is_empty() {
            out.push('\n');
            for n in &self.not_applicable {
                let _ = writeln!(
                    out,
                    "n/a   {} [{}]: {}",
                    n.name,
                    n.anchors.join(" "),
                    n.reason
                );
            }
        }
        let s = &self.summary;
        let _ = writeln!(
            out,
            "\nverdict: {} — {} passed, {} failed, {} skipped, {} not applicable{}{} in {} ms",
            match self.verdict {
                Verdict::Pass => "PASS",
                Verdict::Fail => "FAIL",
            },
            s.passed,
            s.failed,
            s.skipped,
            s.not_applicable,
            match (s.with_warnings, s.ambiguous) {
                (0, 0) => String::new(),
                (w, a) => format!("; {w} with warnings, {a} ambiguous (neither fails)"),
            },
            if self.strict {
                " (strict: skips fail)"
            } else {
                ""
            },
            self.duration_ms
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, status: Status) -> CheckReport {
        CheckReport {
            name: name.into(),
            status,
            anchors: vec!["B1".into()],
            evidence: vec!["seen".into()],
            duration_ms: 1,
        }
    }

    #[test]
    fn strict_turns_a_skip_into_a_failed_verdict() {
        let checks = vec![check("a", Status::Pass), check("b", Status::Skipped)];
        let lax = Report::new("t".into(), None, false, 0, checks.clone(), vec![]);
        assert!(lax.passed());
        let strict = Report::new("t".into(), None, true, 0, checks, vec![]);
        assert!(!strict.passed());
        assert_eq!(strict.summary.skipped, 1);
    }

    #[test]
    fn a_failure_fails_and_not_applicable_never_does() {
        let na = vec![NotApplicable {
            name: "g".into(),
            anchors: vec![],
            reason: "r".into(),
        }];
        let ok = Report::new(
            "t".into(),
            None,
            true,
            0,
            vec![check("a", Status::Pass)],
            na,
        );
        assert!(ok.passed());
        let bad = Report::new(
            "t".into(),
            None,
            false,
            0,
            vec![check("a", Status::Fail)],
            vec![],
        );
        assert!(!bad.passed());
        assert!(bad.render_text().contains("FAIL  a [B1]"));
    }

    #[test]
    fn warnings_and_ambiguities_are_counted_and_never_fail_a_strict_run() {
        let mut warned = check("a", Status::Pass);
        warned
            .evidence
            .push(format!("{WARNING_PREFIX}range past the end"));
        let mut unsure = check("b", Status::Pass);
        unsure
            .evidence
            .push(format!("{AMBIGUOUS_PREFIX}reading A …; reading B …"));
        let r = Report::new("t".into(), None, true, 0, vec![warned, unsure], vec![]);
        assert!(r.passed());
        assert_eq!((r.summary.with_warnings, r.summary.ambiguous), (1, 1));
        assert!(r.render_text().contains("1 with warnings, 1 ambiguous"));
        // A report written before the counts existed still reads.
        let old = r#"{"passed":1,"failed":0,"skipped":0,"not_applicable":0}"#;
        let back: Summary = serde_json::from_str(old).unwrap();
        assert_eq!(back.with_warnings, 0);
    }

    #[test]
    fn json_round_trips_with_lowercase_statuses() {
        let r = Report::new(
            "t".into(),
            None,
            false,
            5,
            vec![check("a", Status::Skipped)],
            vec![],
        );
        let json = r.to_json();
        assert!(json.contains("\"status\": \"skipped\""), "{json}");
        assert!(json.contains("\"verdict\": \"pass\""), "{json}");
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
