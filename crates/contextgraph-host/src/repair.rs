//! The host's repair policy: the faults the host fixes itself instead of
//! quarantining the answer, because fixing them needs no more trust in the
//! provider than accepting an honest answer does.
//!
//! Other CGP implementations exist, and most of them answer with one of two
//! faults that are not lies about anything the host relies on:
//!
//! - **D1, a digest of something else.** `content_digest` is well-formed but
//!   is not the SHA-256 of the inline content: the digest of the whole backing
//!   file, or a placeholder such as `sha256:1111…`. The host never relies on a
//!   declared digest for identity, dedup or citations; it hashes the content
//!   itself. So the repair is to use the recomputed digest everywhere the host
//!   names the frame, and to keep the declared one only to talk back to the
//!   provider that chose it (`verify`, see [`crate::cache`]): a provider that
//!   hashes differently still recognises its own digest.
//! - **F5, a one-line range written `L10`.** The protocol writes ranges
//!   `L<start>-<end>`; `L<n>` has only one reading, `L<n>-<n>`, and addresses
//!   the same bytes, so the provider's file digest stays checkable.
//!
//! Everything else still quarantines the answer whole (B2): budget and cost
//! lies (B1, B3, B4 — a provider that ignores `max_frames` is not trimmed),
//! scores out of range, empty titles and citations, consent and scope, kinds
//! and `as_of`, malformed digests (a digest that is not one cannot be told
//! apart from corruption), representations. A repair is only made when it
//! is the *only* fault: an answer with a repairable fault and a lie is
//! quarantined, and its report lists both.
//!
//! [`AuditPolicy::Strict`] turns repairs off: every fault quarantines, as
//! before this policy existed.

use std::fmt;

use contextgraph_provider_sdk::sha256_digest;
use contextgraph_types::digest::{is_sha256_digest, LineRange};
use contextgraph_types::validate::Anchor;
use contextgraph_types::ContextFrame;

/// How the audit treats faults it could repair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum AuditPolicy {
    /// Repair what the policy allows (see the [module](self) docs), record
    /// each repair, quarantine everything else.
    #[default]
    Repair,
    /// Repair nothing: any fault quarantines the whole answer.
    Strict,
}

impl AuditPolicy {
    /// `Strict` when `strict`, else `Repair`.
    pub fn strict(strict: bool) -> Self {
        if strict {
            AuditPolicy::Strict
        } else {
            AuditPolicy::Repair
        }
    }
}

/// What kind of fault was repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RepairKind {
    /// D1: the declared `content_digest` was not of the content; the host
    /// uses the digest it recomputed.
    ContentDigest,
    /// F5: a one-line range written `L<n>`, read as `L<n>-<n>`.
    SingleLineRange,
}

impl RepairKind {
    /// The rule the fault broke.
    pub fn anchor(self) -> Anchor {
        match self {
            RepairKind::ContentDigest => Anchor::D1,
            RepairKind::SingleLineRange => Anchor::F5,
        }
    }

    /// What was wrong and what the host did, in a few words.
    pub fn note(self) -> &'static str {
        match self {
            RepairKind::ContentDigest => "declared digest was not of the content; recomputed",
            RepairKind::SingleLineRange => "one-line range written L<n>; read as L<n>-<n>",
        }
    }
}

/// One fault the host repaired in an accepted answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// What was repaired.
    pub kind: RepairKind,
    /// The frame's id, as the provider sent it.
    pub frame_id: String,
    /// Where, as a path into the answer (`frames[0].content_digest`).
    pub path: String,
    /// The value the provider sent.
    pub declared: String,
    /// The value the host uses instead.
    pub repaired: String,
}

impl Repair {
    /// The rule the fault broke.
    pub fn anchor(&self) -> Anchor {
        self.kind.anchor()
    }
}

impl fmt::Display for Repair {
    /// `repaired: D1 — declared digest was not of the content; recomputed
    /// (frame x at frames[0].content_digest)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "repaired: {} — {} (frame {:?} at {})",
            self.anchor(),
            self.kind.note(),
            self.frame_id,
            self.path
        )
    }
}

/// Read `L<n>` (a one-line range without its end) as `L<n>-<n>`; `None`
/// for anything else, including every range that is already well-formed.
pub fn single_line_range(text: &str) -> Option<LineRange> {
    let digits = text.strip_prefix('L')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let line: u32 = digits.parse().ok()?;
    LineRange::new(line, line)
}

/// Repair, in place, every fault the policy allows in `frames` (skipping
/// the frames `skip` marks: unknown kinds, which are dropped anyway), and
/// return what was repaired, in frame order.
pub(crate) fn repair_frames(frames: &mut [ContextFrame], skip: &[bool]) -> Vec<Repair> {
    let mut repairs = Vec::new();
    for (i, frame) in frames.iter_mut().enumerate() {
        if skip.get(i).copied().unwrap_or(false) {
            continue;
        }
        if let (Some(content), Some(declared)) = (&frame.content, &frame.content_digest) {
            // Only a well-formed digest of other bytes: a malformed one is
            // a grammar fault, left to quarantine.
            if is_sha256_digest(declared) {
                let actual = sha256_digest(content.as_bytes());
                if &actual != declared {
                    repairs.push(Repair {
                        kind: RepairKind::ContentDigest,
                        frame_id: frame.id.clone(),
                        path: format!("frames[{i}].content_digest"),
                        declared: declared.clone(),
                        repaired: actual.clone(),
                    });
                    frame.content_digest = Some(actual);
                }
            }
        }
        for (j, p) in frame.provenance.iter_mut().enumerate() {
            if !p.is_file() {
                continue;
            }
            let Some(range) = p.range.as_deref() else {
                continue;
            };
            if let Some(line) = single_line_range(range) {
                let fixed = line.to_string();
                repairs.push(Repair {
                    kind: RepairKind::SingleLineRange,
                    frame_id: frame.id.clone(),
                    path: format!("frames[{i}].provenance[{j}].range"),
                    declared: range.to_owned(),
                    repaired: fixed.clone(),
                });
                p.range = Some(fixed);
            }
        }
    }
    repairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_types::{FrameKind, Provenance};

    #[test]
    fn only_the_one_line_form_is_read_as_a_range() {
        assert_eq!(single_line_range("L10"), LineRange::new(10, 10));
        for not in [
            "L0",
            "L",
            "L10-10",
            "L-3",
            "l10",
            "L1x",
            "10",
            "L99999999999",
        ] {
            assert_eq!(single_line_range(not), None, "{not}");
        }
    }

    #[test]
    fn a_digest_of_other_bytes_and_a_short_range_are_repaired_and_recorded() {
        let mut frame = ContextFrame::new("a", FrameKind::Snippet, "t", "fn a() {}\n");
        frame.content_digest = Some(format!("sha256:{}", "1".repeat(64)));
        frame.provenance.push(Provenance {
            kind: Provenance::FILE.to_owned(),
            uri: Some("file:///x.rs".to_owned()),
            range: Some("L3".to_owned()),
            digest: Some(format!("sha256:{}", "2".repeat(64))),
            ..Provenance::default()
        });
        let mut frames = vec![frame];
        let repairs = repair_frames(&mut frames, &[false]);
        assert_eq!(repairs.len(), 2);
        assert_eq!(repairs[0].anchor(), Anchor::D1);
        assert_eq!(
            frames[0].content_digest.as_deref(),
            Some(sha256_digest(b"fn a() {}\n").as_str())
        );
        assert_eq!(repairs[1].anchor(), Anchor::F5);
        assert_eq!(frames[0].provenance[0].range.as_deref(), Some("L3-3"));
        assert!(repairs[0]
            .to_string()
            .starts_with("repaired: D1 — declared digest was not of the content; recomputed"));
    }

    #[test]
    fn malformed_digests_honest_digests_and_skipped_frames_are_left_alone() {
        let mut malformed = ContextFrame::new("m", FrameKind::Doc, "t", "x");
        malformed.content_digest = Some("sha256:abc".to_owned());
        let mut honest = ContextFrame::new("h", FrameKind::Doc, "t", "y");
        honest.content_digest = Some(sha256_digest(b"y"));
        let mut skipped = ContextFrame::new("s", FrameKind::Doc, "t", "z");
        skipped.content_digest = Some(format!("sha256:{}", "1".repeat(64)));
        let mut frames = vec![malformed.clone(), honest.clone(), skipped.clone()];
        assert!(repair_frames(&mut frames, &[false, false, true]).is_empty());
        assert_eq!(frames, vec![malformed, honest, skipped]);
    }
}
