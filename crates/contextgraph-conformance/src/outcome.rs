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

/// Prefix of a failing evidence line.
pub const FAIL_PREFIX: &str = "✗ ";

/// Prefix of a warning: something worth fixing that the protocol's text does
/// not make a failure (a range reaching past the end of its file, whose
/// clipped bytes were re-hashed). Never fails a run, strict or not.
pub const WARNING_PREFIX: &str = "warning: ";

/// Prefix of an ambiguity: the provider did something one reading of the
/// protocol's text allows and another forbids. The line states both
/// readings; it never fails a run, and `docs/requirements.md` records the
/// reading this project follows.
pub const AMBIGUOUS_PREFIX: &str = "ambiguous: ";

/// Collects evidence lines; any `fail` line makes the outcome a failure.
///
/// At most [`MAX_EVIDENCE_LINES`] lines are kept. When there are more,
/// failing, warning and ambiguous lines are kept before plain notes (a
/// finding must never be pushed out of the report by observations), each
/// group in the order recorded, and one last line counts what was left out.
#[derive(Debug, Default)]
pub struct Evidence {
    /// `(is a finding, line)`, in the order recorded; at most
    /// `MAX_EVIDENCE_LINES` of each kind are stored.
    lines: Vec<(bool, String)>,
    findings: usize,
    notes: usize,
    failed: bool,
}

impl Evidence {
    fn push(&mut self, finding: bool, text: String) {
        let count = if finding {
            &mut self.findings
        } else {
            &mut self.notes
        };
        *count += 1;
        if *count <= MAX_EVIDENCE_LINES {
            self.lines
                .push((finding, bounded(&text, MAX_EVIDENCE_CHARS)));
        }
    }

    /// Something that holds.
    pub fn note(&mut self, text: impl Into<String>) {
        self.push(false, text.into());
    }

    /// Something that breaks the rule.
    pub fn fail(&mut self, text: impl Into<String>) {
        self.failed = true;
        self.push(true, format!("{FAIL_PREFIX}{}", text.into()));
    }

    /// Something worth fixing that does not break the rule as written (see
    /// [`WARNING_PREFIX`]).
    pub fn warn(&mut self, text: impl Into<String>) {
        self.push(true, format!("{WARNING_PREFIX}{}", text.into()));
    }

    /// Behaviour one reading of the protocol allows and another forbids;
    /// `text` states both readings (see [`AMBIGUOUS_PREFIX`]).
    pub fn ambiguous(&mut self, text: impl Into<String>) {
        self.push(true, format!("{AMBIGUOUS_PREFIX}{}", text.into()));
    }

    /// Whether a `fail` line was recorded.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The outcome: failed if any line failed, passed otherwise.
    pub fn finish(self) -> Outcome {
        let total = self.findings + self.notes;
        let kept_findings = self.findings.min(MAX_EVIDENCE_LINES);
        let note_room = MAX_EVIDENCE_LINES - kept_findings;
        let mut notes_kept = 0usize;
        let mut lines: Vec<String> = self
            .lines
            .into_iter()
            .filter(|(finding, _)| {
                *finding || {
                    notes_kept += 1;
                    notes_kept <= note_room
                }
            })
            .map(|(_, line)| line)
            .collect();
        if total > lines.len() {
            lines.push(format!("… and {} more line(s)", total - lines.len()));
        }
        Outcome {
            kind: if self.failed { Kind::Fail } else { Kind::Pass },
            evidence: lines,
        }
    }
}
