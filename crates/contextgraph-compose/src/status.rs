//! The one status vocabulary for what happened with a provider: the engine's
//! summaries, the CLI, the MCP tools and reports all speak it.

use serde::{Deserialize, Serialize};

/// What happened with one provider, in a few words. Derived from the host's
/// outcome (`contextgraph_host::ProviderOutcome::status`), plus
/// [`OutcomeStatus::NotStarted`] for a provider that never got that far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

impl OutcomeStatus {
    /// The word for it, as serialized (`consent_required`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Accepted => "accepted",
            OutcomeStatus::ConsentRequired => "consent_required",
            OutcomeStatus::TimedOut => "timed_out",
            OutcomeStatus::Crashed => "crashed",
            OutcomeStatus::Error => "error",
            OutcomeStatus::Quarantined => "quarantined",
            OutcomeStatus::Skipped => "skipped",
            OutcomeStatus::NotStarted => "not_started",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_is_the_serialized_form() {
        for s in [
            OutcomeStatus::Accepted,
            OutcomeStatus::ConsentRequired,
            OutcomeStatus::TimedOut,
            OutcomeStatus::Crashed,
            OutcomeStatus::Error,
            OutcomeStatus::Quarantined,
            OutcomeStatus::Skipped,
            OutcomeStatus::NotStarted,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }
}
