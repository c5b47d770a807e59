//! How one check ended and the evidence behind it: shared by the provider
//! suite's checks and by the host suite (`contextgraph-conformance-host`),
//! so both produce the same [`Report`](crate::Report) lines, bounded the
//! same way.

use crate::report::MAX_EVIDENCE_LINES;
use crate::text::MAX_EVIDENCE_CHARS;
use contextgraph_types::display_text::bounded;

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The rule holds.
    Pass,
    /// The rule is broken (the evidence says where).
    Fail,
    /// The check could not run (the evidence says why).
    Skipped,
    /// The declared capabilities do not call for the check.
    NotApplicable,
}

/// A check's outcome with its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Pass, fail, skipped or not applicable.
    pub kind: Kind,
    /// What was observed, one bounded line each.
    pub evidence: Vec<String>,
}

impl Outcome {
    /// Skipped, with the reason (clipped).
    pub fn skipped(reason: impl Into<String>) -> Self {
        Outcome {
            kind: Kind::Skipped,
            evidence: vec![bounded(&reason.into(), MAX_EVIDENCE_CHARS)],
        }
    }

    /// Not applicable, with the reason.
    pub fn not_applicable(reason: impl Into<String>) -> Self {
        Outcome {
            kind: Kind::NotApplicable,
            evidence: vec![reason.into()],
        }
    }

    /// Failed, with the reason.
    pub fn fail(reason: impl Into<String>) -> Self {
        let mut e = Evidence::default();
        e.fail(reason);
        e.finish()
    }
}

/// Collects evidence lines; any `fail` line makes the outcome a failure.
#[derive(Debug, Default)]
pub struct Evidence {
    lines: Vec<String>,
    extra: usize,
    failed: bool,
}

impl Evidence {
    fn push(&mut self, text: String) {
        if self.lines.len() < MAX_EVIDENCE_LINES {
            self.lines.push(bounded(&text, MAX_EVIDENCE_CHARS));
        } else {
            self.extra += 1;
        }
    }

    /// Something that holds.
    pub fn note(&mut self, text: impl Into<String>) {
        self.push(text.into());
    }

    /// Something that breaks the rule.
    pub fn fail(&mut self, text: impl Into<String>) {
        self.failed = true;
        self.push(format!("✗ {}", text.into()));
    }

    /// Whether a `fail` line was recorded.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The outcome: failed if any line failed, passed otherwise.
    pub fn finish(mut self) -> Outcome {
        if self.extra > 0 {
            let extra = self.extra;
            self.lines.push(format!("… and {extra} more line(s)"));
        }
        Outcome {
            kind: if self.failed { Kind::Fail } else { Kind::Pass },
            evidence: self.lines,
        }
    }
}
