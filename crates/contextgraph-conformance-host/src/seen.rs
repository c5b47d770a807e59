//! What the host did with one provider, reduced to what a check decides on.
//!
//! Every host check runs the real host against a provider and turns the
//! host's answer (a fan-out outcome, a handshake error, a connection error)
//! into a [`Seen`]. The decision functions in the check modules take `Seen`
//! values only, so each can be unit-tested with the outcomes of a broken host
//! (e.g. "accepted the liar too") and shown to fail.

use std::fmt;

use contextgraph_host::{
    ConnectionError, HandshakeError, ProviderOutcome, ProviderReport, RequestError,
};

use contextgraph_conformance::text::MAX_EVIDENCE_CHARS;
use contextgraph_types::display_text::bounded;

/// The host's verdict on one provider (or one request), as a check sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Frames were accepted (ids in the provider's order; unknown kinds dropped).
    Accepted {
        /// Accepted frame ids.
        ids: Vec<String>,
        /// Kinds of frames dropped as unknown (U2).
        dropped_kinds: Vec<String>,
    },
    /// The whole answer was quarantined with these anchors (B2).
    Quarantined {
        /// Anchors of the violations found.
        anchors: Vec<String>,
        /// Frames the host names as offered and rejected.
        offered: usize,
    },
    /// Refused before any payload for want of an egress grant (C1, C2).
    ConsentRequired,
    /// Refused before any payload for want of scope receipts (C6).
    ScopeReceiptsMissing {
        /// The scopes named.
        scopes: Vec<String>,
    },
    /// The request ran into its deadline.
    TimedOut,
    /// The provider process was reported crashed.
    Crashed {
        /// The stderr tail attached to the report.
        stderr_tail: String,
    },
    /// The provider answered `error`.
    ProviderError {
        /// The effective code.
        code: String,
    },
    /// The handshake was refused, naming these anchors.
    HandshakeRejected {
        /// Anchors the host named.
        anchors: Vec<String>,
    },
    /// A correlated provider's reply could not be attributed (H4).
    CorrelationError,
    /// A lock-step session was declared out of step and closed.
    Desynchronised,
    /// Anything else, with the host's message.
    Failed {
        /// The message.
        detail: String,
    },
}

impl Seen {
    /// Whether frames were accepted (at least one).
    pub fn accepted_some(&self) -> bool {
        matches!(self, Seen::Accepted { ids, .. } if !ids.is_empty())
    }

    /// Whether the host quarantined the answer naming `anchor`.
    pub fn quarantined_for(&self, anchor: &str) -> bool {
        matches!(self, Seen::Quarantined { anchors, .. } if anchors.iter().any(|a| a == anchor))
    }

    /// The accepted ids (empty unless accepted).
    pub fn ids(&self) -> &[String] {
        match self {
            Seen::Accepted { ids, .. } => ids,
            _ => &[],
        }
    }

    /// From a fan-out report line.
    pub fn of_report(report: &ProviderReport) -> Seen {
        Seen::of_outcome(&report.outcome)
    }

    /// From a fan-out outcome.
    pub fn of_outcome(outcome: &ProviderOutcome) -> Seen {
        match outcome {
            ProviderOutcome::Accepted {
                frames, dropped, ..
            } => Seen::Accepted {
                ids: frames.iter().map(|f| f.id.clone()).collect(),
                dropped_kinds: dropped.iter().map(|d| d.kind.clone()).collect(),
            },
            ProviderOutcome::Quarantined {
                violations,
                frames_offered,
                ..
            } => {
                let mut anchors: Vec<String> = violations
                    .iter()
                    .map(|v| v.anchor.as_str().to_owned())
                    .collect();
                anchors.sort();
                anchors.dedup();
                Seen::Quarantined {
                    anchors,
                    offered: *frames_offered,
                }
            }
            ProviderOutcome::ConsentRequired { .. } => Seen::ConsentRequired,
            ProviderOutcome::ScopeReceiptsMissing { scopes, .. } => Seen::ScopeReceiptsMissing {
                scopes: scopes.iter().map(|s| s.as_str().to_owned()).collect(),
            },
            ProviderOutcome::TimedOut { .. } => Seen::TimedOut,
            ProviderOutcome::Crashed { stderr_tail, .. } => Seen::Crashed {
                stderr_tail: stderr_tail.clone(),
            },
            ProviderOutcome::ProviderError { effective, .. } => Seen::ProviderError {
                code: effective.to_string(),
            },
            ProviderOutcome::Failed { error } => Seen::of_request_error(error),
            other => Seen::Failed {
                detail: format!("{other:?}"),
            },
        }
    }

    /// From a request error.
    pub fn of_request_error(error: &RequestError) -> Seen {
        match error {
            RequestError::Connection(c) => Seen::of_connection_error(c),
            RequestError::Handshake(h) => Seen::of_handshake_error(h),
            RequestError::Crashed { stderr_tail, .. } => Seen::Crashed {
                stderr_tail: stderr_tail.clone(),
            },
            e if e.is_timeout() => Seen::TimedOut,
            e => Seen::Failed {
                detail: e.to_string(),
            },
        }
    }

    /// From a connection error.
    pub fn of_connection_error(error: &ConnectionError) -> Seen {
        match error {
            ConnectionError::Timeout { .. } => Seen::TimedOut,
            ConnectionError::Correlation { .. } => Seen::CorrelationError,
            ConnectionError::Desynchronised { .. } => Seen::Desynchronised,
            e => Seen::Failed {
                detail: e.to_string(),
            },
        }
    }

    /// From a handshake error.
    pub fn of_handshake_error(error: &HandshakeError) -> Seen {
        let mut anchors: Vec<String> = error
            .anchors()
            .iter()
            .map(|a| a.as_str().to_owned())
            .collect();
        anchors.sort();
        anchors.dedup();
        Seen::HandshakeRejected { anchors }
    }
}

impl fmt::Display for Seen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Seen::Accepted { ids, dropped_kinds } if dropped_kinds.is_empty() => {
                format!("accepted {} frame(s)", ids.len())
            }
            Seen::Accepted { ids, dropped_kinds } => format!(
                "accepted {} frame(s), dropped unknown kind(s) {}",
                ids.len(),
                dropped_kinds.join(", ")
            ),
            Seen::Quarantined { anchors, offered } => format!(
                "quarantined all {offered} frame(s) for {}",
                anchors.join(", ")
            ),
            Seen::ConsentRequired => "refused: consent required, nothing sent".to_owned(),
            Seen::ScopeReceiptsMissing { scopes } => format!(
                "refused: scope receipts missing for {}, nothing sent",
                scopes.join(", ")
            ),
            Seen::TimedOut => "timed out".to_owned(),
            Seen::Crashed { stderr_tail } => {
                format!("reported crashed, stderr tail {stderr_tail:?}")
            }
            Seen::ProviderError { code } => format!("provider error {code}"),
            Seen::HandshakeRejected { anchors } => {
                format!("handshake refused naming {}", anchors.join(", "))
            }
            Seen::CorrelationError => "typed H4 correlation error".to_owned(),
            Seen::Desynchronised => "session declared out of step and closed".to_owned(),
            Seen::Failed { detail } => format!("failed: {detail}"),
        };
        f.write_str(&bounded(&text, MAX_EVIDENCE_CHARS / 2))
    }
}
