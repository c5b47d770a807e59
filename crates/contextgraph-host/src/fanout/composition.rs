//! The one mapping from a fan-out outcome to the composer's input and to
//! the status vocabulary every front end shows. The engine, the conformance
//! host suite and any embedder use this, so a provider's outcome means the
//! same thing everywhere.

use contextgraph_compose::{
    OutcomeStatus, ProviderOutcome as ComposeOutcome, ProviderStatus as ComposeStatus, RepairRecord,
};
use contextgraph_types::{ContextFrame, ErrorCode};

use super::ProviderOutcome;
use crate::repair::Repair;

/// Longest provider-controlled text copied into a composition outcome,
/// escaped and bounded by the one display-text policy.
const MAX_DETAIL_CHARS: usize = 600;

fn shorten(text: &str) -> String {
    contextgraph_types::display_text::bounded(text, MAX_DETAIL_CHARS)
}

impl ProviderOutcome {
    /// The status word for this outcome.
    pub fn status(&self) -> OutcomeStatus {
        match self {
            ProviderOutcome::Accepted { .. } => OutcomeStatus::Accepted,
            ProviderOutcome::ConsentRequired { .. }
            | ProviderOutcome::ScopeReceiptsMissing { .. } => OutcomeStatus::ConsentRequired,
            ProviderOutcome::TimedOut { .. } => OutcomeStatus::TimedOut,
            ProviderOutcome::Crashed { .. } | ProviderOutcome::Failed { .. } => {
                OutcomeStatus::Crashed
            }
            ProviderOutcome::ProviderError { .. } => OutcomeStatus::Error,
            ProviderOutcome::Quarantined { .. } => OutcomeStatus::Quarantined,
            ProviderOutcome::Skipped { .. } => OutcomeStatus::Skipped,
        }
    }

    /// The composer's input for this outcome of `provider_id`, with the
    /// host's repairs recorded. A quarantined answer goes with the frames it
    /// offered, so the composition audit names and counts each one it
    /// rejects: `offered` when given, else the frames the host kept.
    ///
    /// A skipped provider (nothing was sent, e.g. P5) is an `error` with code
    /// `skipped` and the reason, never a crash: it did not fail, it was not asked.
    pub fn to_composition(&self, provider_id: &str, offered: Vec<ContextFrame>) -> ComposeOutcome {
        let without = |status| ComposeOutcome::without_frames(provider_id, status);
        match self {
            ProviderOutcome::Accepted {
                frames, repairs, ..
            } => ComposeOutcome::accepted(provider_id, frames.clone())
                .with_repairs(repairs.iter().map(repair_record).collect()),
            ProviderOutcome::ConsentRequired { .. } => {
                without(ComposeStatus::ConsentMissing { scopes: Vec::new() })
            }
            ProviderOutcome::ScopeReceiptsMissing { scopes, .. } => {
                without(ComposeStatus::ConsentMissing {
                    scopes: scopes.iter().map(|s| s.as_str().to_owned()).collect(),
                })
            }
            ProviderOutcome::TimedOut { after_ms } => without(ComposeStatus::TimedOut {
                after_ms: u64::try_from(*after_ms).unwrap_or(u64::MAX),
            }),
            ProviderOutcome::Crashed { status, .. } => without(ComposeStatus::Crashed {
                detail: shorten(status),
            }),
            ProviderOutcome::ProviderError {
                effective, message, ..
            } => without(ComposeStatus::Error {
                code: effective.clone(),
                message: shorten(message),
            }),
            ProviderOutcome::Quarantined {
                violations, frames, ..
            } => {
                let offered = if offered.is_empty() {
                    frames.clone()
                } else {
                    offered
                };
                ComposeOutcome::quarantined(provider_id, offered, violations.clone())
            }
            ProviderOutcome::Skipped { reason, .. } => without(ComposeStatus::Error {
                code: ErrorCode::Other("skipped".into()),
                message: shorten(reason),
            }),
            ProviderOutcome::Failed { error } => without(ComposeStatus::Crashed {
                detail: shorten(&error.to_string()),
            }),
        }
    }
}

/// A host repair as the composition audit records it.
pub(crate) fn repair_record(repair: &Repair) -> RepairRecord {
    RepairRecord {
        anchor: repair.anchor().as_str().to_owned(),
        frame_id: shorten(&repair.frame_id),
        path: repair.path.clone(),
        declared: shorten(&repair.declared),
        repaired: repair.repaired.clone(),
        note: repair.kind.note().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_types::validate::Anchor;

    #[test]
    fn a_skipped_provider_is_an_error_named_skipped_not_a_crash() {
        let skipped = ProviderOutcome::Skipped {
            anchor: Anchor::P5,
            reason: "no advertised representation was wanted".into(),
        };
        assert_eq!(skipped.status(), OutcomeStatus::Skipped);
        let composed = skipped.to_composition("p", Vec::new());
        assert_eq!(
            composed.status,
            ComposeStatus::Error {
                code: ErrorCode::Other("skipped".into()),
                message: "no advertised representation was wanted".into(),
            }
        );
    }

    #[test]
    fn long_provider_text_is_shortened() {
        let timed = ProviderOutcome::Crashed {
            status: "x".repeat(700),
            stderr_tail: String::new(),
        };
        match timed.to_composition("p", Vec::new()).status {
            ComposeStatus::Crashed { detail } => {
                assert_eq!(detail.chars().count(), MAX_DETAIL_CHARS);
                assert!(detail.ends_with('…'), "{detail}");
            }
            other => panic!("expected Crashed, got {other:?}"),
        }
    }
}
