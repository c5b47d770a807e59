//! What each provider contributed to one composition: its accepted frames,
//! or why it contributed nothing.
//!
//! The composer is transport-free: the host (or `cgp context`) runs the
//! queries, audits each answer, and hands over one [`ProviderOutcome`] per
//! provider. Every outcome appears in the [`Audit`](crate::Audit), including
//! those that carried no frame, so nothing a provider offered, or failed to
//! offer, goes unreported.

use contextgraph_types::{ContextFrame, ContextQuery, ContextQueryResult, ErrorCode, Violation};
use serde::{Deserialize, Serialize};

use crate::hash::Sha256Hasher;

/// One provider's result for the query being composed.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderOutcome {
    /// The provider's id as the host knows it. It is the `provider_id` of
    /// every FrameId built from these frames, so a provider cannot choose
    /// whose frames it appears to serve.
    pub provider_id: String,
    /// What happened.
    pub status: ProviderStatus,
    /// Faults the host repaired in an accepted answer instead of
    /// quarantining it (its repair policy); reported in the audit.
    pub repairs: Vec<RepairRecord>,
}

/// What happened when a provider was asked.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProviderStatus {
    /// The answer passed the host's audit; its frames are candidates.
    Accepted {
        /// The frames, in any order (the composition does not depend on it).
        frames: Vec<ContextFrame>,
    },
    /// The answer broke a rule (B1–B4, F1–F5, D1, P1–P3, …): every frame is
    /// dropped with a loud report (B2), none reaches dedup, so a violator
    /// cannot evict anybody's frame either.
    Quarantined {
        /// The frames it offered (each gets an audit entry).
        frames: Vec<ContextFrame>,
        /// Why, with anchors.
        violations: Vec<Violation>,
    },
    /// The provider needs consent that is not recorded (C1, C2, C6), so no
    /// query was sent.
    ConsentMissing {
        /// The scopes lacking a live consent receipt (empty: egress itself).
        scopes: Vec<String>,
    },
    /// No answer within the host's deadline.
    TimedOut {
        /// The deadline, in milliseconds.
        after_ms: u64,
    },
    /// The provider process died or its transport broke.
    Crashed {
        /// What the host saw (exit status, last error).
        detail: String,
    },
    /// The provider answered with an `error` envelope.
    Error {
        /// The code (open vocabulary; unknown codes act as `internal`, X1).
        code: ErrorCode,
        /// The provider's message.
        message: String,
    },
}

impl ProviderOutcome {
    /// An accepted answer.
    pub fn accepted(provider_id: impl Into<String>, frames: Vec<ContextFrame>) -> Self {
        ProviderOutcome {
            provider_id: provider_id.into(),
            status: ProviderStatus::Accepted { frames },
            repairs: Vec::new(),
        }
    }

    /// A quarantined answer.
    pub fn quarantined(
        provider_id: impl Into<String>,
        frames: Vec<ContextFrame>,
        violations: Vec<Violation>,
    ) -> Self {
        ProviderOutcome {
            provider_id: provider_id.into(),
            status: ProviderStatus::Quarantined { frames, violations },
            repairs: Vec::new(),
        }
    }

    /// A provider that contributed nothing, for the reason given.
    pub fn without_frames(provider_id: impl Into<String>, status: ProviderStatus) -> Self {
        ProviderOutcome {
            provider_id: provider_id.into(),
            status,
            repairs: Vec::new(),
        }
    }

    /// This outcome with the host's `repairs` recorded.
    #[must_use]
    pub fn with_repairs(mut self, repairs: Vec<RepairRecord>) -> Self {
        self.repairs = repairs;
        self
    }

    /// Audit `result` against `query` with content digests recomputed (D1)
    /// and turn it into an outcome: accepted when nothing is wrong,
    /// quarantined with every violation otherwise (B2: the whole answer goes,
    /// never a silent truncation).
    pub fn audited(
        provider_id: impl Into<String>,
        query: &ContextQuery,
        result: ContextQueryResult,
    ) -> Self {
        let violations = result.validate_with(query, &Sha256Hasher);
        if violations.is_empty() {
            ProviderOutcome::accepted(provider_id, result.frames)
        } else {
            ProviderOutcome::quarantined(provider_id, result.frames, violations)
        }
    }

    /// The frames this outcome offered (accepted or quarantined).
    pub fn offered_frames(&self) -> &[ContextFrame] {
        match &self.status {
            ProviderStatus::Accepted { frames } | ProviderStatus::Quarantined { frames, .. } => {
                frames
            }
            _ => &[],
        }
    }
}

/// A [`Violation`] in serialisable form, as the audit reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViolationRecord {
    /// The requirement anchor, e.g. `B1`.
    pub anchor: String,
    /// Where in the answer, e.g. `frames[3].token_cost`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// A fault the host repaired instead of quarantining the answer, as the
/// audit reports it: `repaired: D1 — declared digest was not of the content;
/// recomputed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairRecord {
    /// The requirement anchor of the fault, e.g. `D1`.
    pub anchor: String,
    /// The frame, by the id its provider gave it.
    pub frame_id: String,
    /// Where in the answer, e.g. `frames[0].content_digest`.
    pub path: String,
    /// What the provider sent.
    pub declared: String,
    /// What the host uses instead.
    pub repaired: String,
    /// What was wrong and what was done, in a few words.
    pub note: String,
}

impl std::fmt::Display for RepairRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "repaired: {} — {} (frame {:?} at {})",
            self.anchor, self.note, self.frame_id, self.path
        )
    }
}

impl From<&Violation> for ViolationRecord {
    fn from(v: &Violation) -> Self {
        ViolationRecord {
            anchor: v.anchor.as_str().to_owned(),
            path: v.path.clone(),
            message: v.message.clone(),
        }
    }
}
