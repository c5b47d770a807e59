//! What a front end asks ([`ContextRequest`]) and gets back
//! ([`ContextAnswer`]), and how each provider's fan-out outcome becomes a
//! composition input plus a summary a person can act on.

use contextgraph_compose::{
    Budget, Composition, Placement, ProviderOutcome as ComposeOutcome,
    ProviderStatus as ComposeStatus,
};
use contextgraph_host::ProviderOutcome;
use contextgraph_types::{ErrorCode, FrameKind};
use serde::Serialize;

/// A request for context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    /// What the context is for.
    pub goal: String,
    /// The budget of the whole prompt in model tokens; 0 means the
    /// configured `budget`.
    pub budget_model_tokens: u32,
    /// Only these kinds (empty: any).
    pub kinds: Vec<FrameKind>,
    /// Files or symbols the goal is about.
    pub anchors: Vec<String>,
    /// The most frames asked of each provider (1 to [`MAX_FRAMES`]).
    pub max_frames: u32,
    /// Ranked (best at the edges) or stable (byte-identical for caches).
    pub placement: Placement,
    /// Model tokens per budget token; `None` means the configured `safety_factor`.
    pub safety_factor: Option<f64>,
    /// An exact budget, overriding `budget_model_tokens` and `safety_factor`
    /// (e.g. a budget in budget tokens).
    pub budget: Option<Budget>,
}

/// Largest `max_frames` accepted.
pub const MAX_FRAMES: u32 = 1000;

impl Default for ContextRequest {
    fn default() -> Self {
        ContextRequest {
            goal: String::new(),
            budget_model_tokens: 0,
            kinds: Vec::new(),
            anchors: Vec::new(),
            max_frames: 64,
            placement: Placement::Ranked,
            safety_factor: None,
            budget: None,
        }
    }
}

/// The answer: the composition and what happened with every provider.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextAnswer {
    /// Prompt, citations, audit and usage (see `contextgraph-compose`).
    pub composition: Composition,
    /// One entry per configured, enabled provider, in configuration order.
    pub providers: Vec<ProviderOutcomeSummary>,
    /// Host-level warnings (an unreadable consent store, …).
    pub warnings: Vec<String>,
    /// The audited outcomes the composition was made from, in configuration
    /// order. Reports use them to show each frame's kind, title and score,
    /// which the audit does not record; they are not part of the JSON answer.
    #[serde(skip)]
    pub outcomes: Vec<ComposeOutcome>,
}

impl ContextAnswer {
    /// How many providers answered (their answer passed the audit).
    pub fn answered(&self) -> usize {
        self.providers
            .iter()
            .filter(|p| p.status == OutcomeStatus::Accepted)
            .count()
    }
}

/// What happened with one provider, in a few words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// Its answer passed the audit.
    Accepted,
    /// An egress provider without consent: nothing was sent (C1, C2, C6).
    ConsentRequired,
    /// No answer in time.
    TimedOut,
    /// It crashed or its transport broke.
    Crashed,
    /// It answered with an error.
    Error,
    /// Its answer broke protocol rules and was dropped whole (B2).
    Quarantined,
    /// It cannot be sent this query (nothing was sent).
    Skipped,
    /// It could not be started or handshaken.
    NotStarted,
}

/// One provider's line in a [`ContextAnswer`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderOutcomeSummary {
    /// The configured name.
    pub name: String,
    /// The id it handshook as (frames and consent are keyed on it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// What happened.
    pub status: OutcomeStatus,
    /// Frames accepted.
    pub frames: usize,
    /// It left candidates out.
    pub truncated: bool,
    /// Frames of unknown kinds it served, dropped (U2).
    pub dropped_unknown_kinds: usize,
    /// Why, when it contributed nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What to run to fix it, when there is one thing (a consent grant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

impl ProviderOutcomeSummary {
    pub(crate) fn new(name: &str, provider_id: Option<&str>, status: OutcomeStatus) -> Self {
        ProviderOutcomeSummary {
            name: name.to_owned(),
            provider_id: provider_id.map(str::to_owned),
            status,
            frames: 0,
            truncated: false,
            dropped_unknown_kinds: 0,
            detail: None,
            action: None,
        }
    }
}

/// Longest provider-controlled text copied into a summary.
const MAX_DETAIL_CHARS: usize = 600;

pub(crate) fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_DETAIL_CHARS {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(MAX_DETAIL_CHARS).collect();
    s.push('…');
    s
}

/// Map one host outcome to the composer's input and a summary. `grant`
/// builds the exact consent command for a list of scopes.
pub(crate) fn map_outcome(
    name: &str,
    provider_id: &str,
    outcome: &ProviderOutcome,
    grant: &dyn Fn(&[String]) -> String,
) -> (ComposeOutcome, ProviderOutcomeSummary) {
    let mut summary = ProviderOutcomeSummary::new(name, Some(provider_id), OutcomeStatus::Accepted);
    let without = |status| ComposeOutcome::without_frames(provider_id, status);
    let compose = match outcome {
        ProviderOutcome::Accepted {
            frames,
            truncated,
            dropped,
        } => {
            summary.frames = frames.len();
            summary.truncated = *truncated;
            summary.dropped_unknown_kinds = dropped.len();
            ComposeOutcome::accepted(provider_id, frames.clone())
        }
        ProviderOutcome::ConsentRequired {
            provider_version,
            reason,
            ..
        } => {
            let command = grant(&[]);
            summary.status = OutcomeStatus::ConsentRequired;
            summary.detail = Some(format!(
                "C1/C2: {provider_id} {provider_version} sends data off this machine and {reason}; nothing was sent to it. To allow it, run: {command}"
            ));
            summary.action = Some(command);
            without(ComposeStatus::ConsentMissing { scopes: Vec::new() })
        }
        ProviderOutcome::ScopeReceiptsMissing {
            scopes,
            provider_version,
        } => {
            let scopes: Vec<String> = scopes.iter().map(|s| s.as_str().to_owned()).collect();
            let command = grant(&scopes);
            summary.status = OutcomeStatus::ConsentRequired;
            summary.detail = Some(format!(
                "C6: {provider_id} {provider_version} sends data to {} without a consent receipt for it; nothing was sent to it. To allow it, run: {command}",
                scopes.join(", ")
            ));
            summary.action = Some(command);
            without(ComposeStatus::ConsentMissing { scopes })
        }
        ProviderOutcome::TimedOut { after_ms } => {
            summary.status = OutcomeStatus::TimedOut;
            summary.detail = Some(format!(
                "no answer within {after_ms} ms; raise its timeout_ms in cgp.toml if it is just slow"
            ));
            without(ComposeStatus::TimedOut {
                after_ms: u64::try_from(*after_ms).unwrap_or(u64::MAX),
            })
        }
        ProviderOutcome::Crashed {
            status,
            stderr_tail,
        } => {
            summary.status = OutcomeStatus::Crashed;
            summary.detail = Some(shorten(&format!(
                "crashed ({status}); its stderr ended with: {stderr_tail:?}"
            )));
            without(ComposeStatus::Crashed {
                detail: shorten(status),
            })
        }
        ProviderOutcome::ProviderError {
            effective,
            message,
            attempts,
            ..
        } => {
            summary.status = OutcomeStatus::Error;
            summary.detail = Some(shorten(&format!(
                "answered error {effective} after {attempts} attempt(s): {message}"
            )));
            without(ComposeStatus::Error {
                code: effective.clone(),
                message: shorten(message),
            })
        }
        ProviderOutcome::Quarantined {
            violations,
            frames_offered,
            ..
        } => {
            summary.status = OutcomeStatus::Quarantined;
            let mut anchors: Vec<&str> = violations.iter().map(|v| v.anchor.as_str()).collect();
            anchors.sort_unstable();
            anchors.dedup();
            let first = violations
                .first()
                .map(|v| {
                    format!(
                        "; first: {} at {}: {}",
                        v.anchor.as_str(),
                        v.path,
                        v.message
                    )
                })
                .unwrap_or_default();
            summary.detail = Some(shorten(&format!(
                "B2: its answer of {frames_offered} frame(s) broke {} and was dropped whole{first}",
                anchors.join(", ")
            )));
            ComposeOutcome::quarantined(provider_id, Vec::new(), violations.clone())
        }
        ProviderOutcome::Skipped { anchor, reason } => {
            summary.status = OutcomeStatus::Skipped;
            summary.detail = Some(shorten(&format!(
                "{}: not queried: {reason}",
                anchor.as_str()
            )));
            without(ComposeStatus::Error {
                code: ErrorCode::Other("skipped".into()),
                message: shorten(reason),
            })
        }
        ProviderOutcome::Failed { error } => {
            summary.status = OutcomeStatus::Crashed;
            summary.detail = Some(shorten(&error.to_string()));
            without(ComposeStatus::Crashed {
                detail: shorten(&error.to_string()),
            })
        }
        other => {
            summary.status = OutcomeStatus::Crashed;
            summary.detail = Some(shorten(&format!("{other:?}")));
            without(ComposeStatus::Crashed {
                detail: "unrecognised outcome".into(),
            })
        }
    };
    (compose, summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_types::{Anchor, EgressScope, Violation};

    fn grant(scopes: &[String]) -> String {
        crate::consent::grant_command("p", scopes, &[])
    }

    #[test]
    fn b2_a_quarantined_answer_reaches_the_audit_with_its_anchors_and_no_frames() {
        let outcome = ProviderOutcome::Quarantined {
            violations: vec![Violation {
                anchor: Anchor::B1,
                path: "frames[0].token_cost".into(),
                message: "declared 1, content costs 9".into(),
            }],
            frames_offered: 3,
            offered: Vec::new(),
        };
        let (compose, summary) = map_outcome("p", "pid", &outcome, &grant);
        assert_eq!(summary.status, OutcomeStatus::Quarantined);
        let detail = summary.detail.unwrap();
        assert!(
            detail.contains("B1") && detail.contains("3 frame(s)"),
            "{detail}"
        );
        match compose.status {
            ComposeStatus::Quarantined { frames, violations } => {
                assert!(frames.is_empty());
                assert_eq!(violations.len(), 1);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn c6_missing_receipts_become_consent_missing_with_the_scopes_and_the_command() {
        let outcome = ProviderOutcome::ScopeReceiptsMissing {
            scopes: vec![EgressScope::ThirdPartyModel],
            provider_version: "2.0".into(),
        };
        let (compose, summary) = map_outcome("p", "pid", &outcome, &grant);
        assert_eq!(summary.status, OutcomeStatus::ConsentRequired);
        assert_eq!(
            summary.action.as_deref(),
            Some("cgp consent grant p --scope third-party-model")
        );
        assert_eq!(
            compose.status,
            ComposeStatus::ConsentMissing {
                scopes: vec!["third-party-model".into()]
            }
        );
    }

    #[test]
    fn provider_text_copied_into_a_summary_is_bounded() {
        let outcome = ProviderOutcome::ProviderError {
            code: None,
            effective: ErrorCode::Internal,
            reaction: ErrorCode::Internal.reaction(),
            message: "x".repeat(100_000),
            attempts: 1,
        };
        let (compose, summary) = map_outcome("p", "pid", &outcome, &grant);
        assert!(summary.detail.unwrap().chars().count() <= MAX_DETAIL_CHARS + 1);
        match compose.status {
            ComposeStatus::Error { message, .. } => {
                assert!(message.chars().count() <= MAX_DETAIL_CHARS + 1)
            }
            other => panic!("{other:?}"),
        }
    }
}
