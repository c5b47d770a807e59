//! Runtime re-checks of every answer (B1, B3, B4, F1–F5, D1, P1–P3, P5,
//! G1–G2, Q1, `as_of`) and the quarantine decision (B2).
//!
//! The rules are not reimplemented here: [`ContextQueryResult::validate_with`]
//! checks them, recomputing costs from content (B3) and content digests from
//! the bytes (D1) with [`Sha256Hasher`]. This module decides what a violation
//! means for the answer: a violation quarantines the *whole* answer with a
//! report — never a silent truncation — because a provider that lies about
//! one frame's cost or scope has forfeited trust in the others (B2).
//!
//! Two exceptions:
//! - a frame of a kind this host does not know (U2) is opaque, not
//!   dishonest, so it is dropped with a note and the rest of the answer is
//!   judged on its own;
//! - under [`AuditPolicy::Repair`] (the default), an answer whose *only*
//!   faults are the few the host can fix without trusting the provider more
//!   (a content digest of other bytes, a one-line range written `L<n>`, see
//!   [`crate::repair`]) is accepted repaired, each repair recorded. Under
//!   [`AuditPolicy::Strict`] those quarantine too.
//!
//! The well-formed answer costs what it did before the policy: it is
//! validated once; only an answer with violations is repaired (on a copy)
//! and validated again.

use contextgraph_provider_sdk::Sha256Hasher;
use contextgraph_types::validate::{Anchor, Violation};
use contextgraph_types::{ContextFrame, ContextQuery, ContextQueryResult, FrameId};
use serde::Serialize;

use crate::repair::repair_frames;
pub use crate::repair::{AuditPolicy, Repair, RepairKind};

/// A frame dropped because its kind is unknown to this host (U2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedFrame {
    /// The frame's identity.
    pub frame: FrameId,
    /// The kind it carried.
    pub kind: String,
}

/// The audit's decision on one provider's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum AuditVerdict {
    /// Every rule held (after the repairs listed); these frames may be used.
    Accepted {
        /// The frames of known kinds, in the provider's order, repaired.
        frames: Vec<ContextFrame>,
        /// Whether the provider said it left candidates out.
        truncated: bool,
        /// Frames of unknown kinds, dropped (U2).
        dropped: Vec<DroppedFrame>,
        /// The faults the host repaired instead of quarantining (empty under
        /// [`AuditPolicy::Strict`]).
        repairs: Vec<Repair>,
    },
    /// At least one rule was broken; nothing from this answer may be used (B2).
    Quarantined {
        /// Every violation found, with its anchor and path (repairable ones
        /// included: the answer was not repaired).
        violations: Vec<Violation>,
        /// How many frames the answer offered.
        frames_offered: usize,
        /// The identities offered, so a report can name each rejected frame.
        offered: Vec<FrameId>,
        /// The frames as offered, so a composition audit can give each
        /// rejected frame its entry and count it (none is used).
        frames: Vec<ContextFrame>,
    },
}

/// Audit `result`, which `provider_id` sent in answer to `sent` (the query as
/// this provider received it), under the default [`AuditPolicy::Repair`].
pub fn audit_answer(
    provider_id: &str,
    sent: &ContextQuery,
    result: ContextQueryResult,
) -> AuditVerdict {
    audit_answer_with(provider_id, sent, result, AuditPolicy::default())
}

/// [`audit_answer`] under `policy`.
pub fn audit_answer_with(
    provider_id: &str,
    sent: &ContextQuery,
    mut result: ContextQueryResult,
    policy: AuditPolicy,
) -> AuditVerdict {
    let unknown: Vec<bool> = result.frames.iter().map(|f| !f.kind.is_known()).collect();
    let violations = violations_of(&result, sent, &unknown);
    let mut repairs = Vec::new();
    if !violations.is_empty() {
        let repaired = match policy {
            AuditPolicy::Strict => None,
            AuditPolicy::Repair => {
                let mut frames = result.frames.clone();
                let made = repair_frames(&mut frames, &unknown);
                let candidate = ContextQueryResult {
                    frames,
                    truncated: result.truncated,
                    dropped_estimate: result.dropped_estimate,
                };
                (!made.is_empty() && violations_of(&candidate, sent, &unknown).is_empty())
                    .then_some((candidate, made))
            }
        };
        match repaired {
            Some((candidate, made)) => {
                result = candidate;
                repairs = made;
            }
            None => {
                return AuditVerdict::Quarantined {
                    frames_offered: result.frames.len(),
                    offered: result
                        .frames
                        .iter()
                        .map(|f| f.frame_id(provider_id))
                        .collect(),
                    frames: result.frames,
                    violations,
                }
            }
        }
    }
    let truncated = result.truncated;
    let mut frames = Vec::with_capacity(result.frames.len());
    let mut dropped = Vec::new();
    for (frame, unknown) in result.frames.into_iter().zip(unknown) {
        if unknown {
            dropped.push(DroppedFrame {
                frame: frame.frame_id(provider_id),
                kind: frame.kind.as_str().to_owned(),
            });
        } else {
            frames.push(frame);
        }
    }
    AuditVerdict::Accepted {
        frames,
        truncated,
        dropped,
        repairs,
    }
}

/// Every violation of `result` outside frames of unknown kinds, plus P5
/// (a representation that was not asked for).
fn violations_of(
    result: &ContextQueryResult,
    sent: &ContextQuery,
    unknown: &[bool],
) -> Vec<Violation> {
    let mut violations: Vec<Violation> = result
        .validate_with(sent, &Sha256Hasher)
        .into_iter()
        .filter(|v| !in_unknown_frame(&v.path, unknown))
        .collect();
    let preferences = sent.effective_preferences();
    for (i, frame) in result.frames.iter().enumerate() {
        if !unknown[i] && !preferences.contains(&frame.representation) {
            violations.push(Violation {
                anchor: Anchor::P5,
                path: format!("frames[{i}].representation"),
                message: format!(
                    "representation {} was not requested (asked for {})",
                    frame.representation,
                    preferences
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    }
    violations
}

/// Whether a violation path points inside a frame of unknown kind.
fn in_unknown_frame(path: &str, unknown: &[bool]) -> bool {
    let Some(rest) = path.strip_prefix("frames[") else {
        return false;
    };
    let Some((index, _)) = rest.split_once(']') else {
        return false;
    };
    index
        .parse::<usize>()
        .ok()
        .and_then(|i| unknown.get(i).copied())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_unknown_frames_are_recognised() {
        let unknown = [false, true];
        assert!(in_unknown_frame("frames[1].kind", &unknown));
        assert!(!in_unknown_frame("frames[0].kind", &unknown));
        assert!(!in_unknown_frame("frames", &unknown));
        assert!(!in_unknown_frame("frames[9].kind", &unknown));
    }
}
