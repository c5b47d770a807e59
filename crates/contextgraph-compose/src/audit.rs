//! The audit record: every offered frame, included or excluded with its
//! reason, and every provider, including those that contributed nothing.
//!
//! Nothing is dropped without an entry: [`Audit::frames`] has exactly one
//! entry per frame any provider offered, sorted in canonical FrameId order
//! (so the record, like the prompt, depends only on the set of frames).

use contextgraph_types::FrameId;
use serde::{Deserialize, Serialize};
use std::fmt;

use crate::budget::Budget;
use crate::hash::ContentSha256;
use crate::outcome::{RepairRecord, ViolationRecord};
use crate::placement::Placement;
use crate::status::OutcomeStatus;

/// What happened to everything offered for one composition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// How included frames were ordered.
    pub placement: Placement,
    /// Budget requested and used.
    pub budget: BudgetAudit,
    /// One entry per provider outcome, in provider-id order.
    pub providers: Vec<ProviderAudit>,
    /// One entry per offered frame, in canonical FrameId order.
    pub frames: Vec<FrameAudit>,
}

/// The budget side of the audit, in budget tokens (B3) unless said otherwise.
///
/// `used` covers the whole prompt, fences and escapes included, so
/// `ceil(prompt bytes / 4) <= used <= requested`; `content` is Σ recomputed
/// `token_cost` of the included frames, the UR1 `budget_consumed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetAudit {
    /// The budget as the host stated it (model or budget tokens).
    pub given: Budget,
    /// That budget in budget tokens.
    pub requested: u32,
    /// What the constant preamble costs (charged only if a frame is included).
    pub preamble: u32,
    /// Charged in total: preamble plus every included block.
    pub used: u32,
    /// Σ recomputed `token_cost` of the included frames' content.
    pub content: u64,
    /// `requested - used`.
    pub remaining: u32,
}

/// One provider's part in the composition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderAudit {
    /// The provider.
    pub provider_id: String,
    /// What the host reported about it.
    pub outcome: OutcomeAudit,
    /// Its weight in the split (default 1).
    pub weight: u32,
    /// What it could use: Σ unescaped block size of the candidates it
    /// represents after dedup (escapes may make the real charge larger).
    pub demand: u64,
    /// Its water-filled share of the budget (before leftovers were redistributed).
    pub share: u32,
    /// Charged for its included frames (may exceed `share` by leftovers).
    pub used: u32,
    /// Frames it offered.
    pub frames_offered: u32,
    /// Frames of its that are in the prompt.
    pub frames_included: u32,
    /// Faults the host repaired in its answer instead of quarantining it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<RepairRecord>,
}

/// A provider outcome as reported in the audit (JSON tag `status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum OutcomeAudit {
    /// Its frames were candidates.
    Accepted,
    /// Its answer broke rules; all its frames were dropped (B2).
    Quarantined {
        /// The distinct anchors broken, sorted.
        anchors: Vec<String>,
        /// Every violation.
        violations: Vec<ViolationRecord>,
    },
    /// Consent was missing (C1, C2, C6); nothing was sent to it. Serialized
    /// `consent_required`, the word [`OutcomeStatus`] uses everywhere else
    /// (`consent_missing`, the word of earlier versions, is still read).
    #[serde(rename = "consent_required", alias = "consent_missing")]
    ConsentMissing {
        /// The scopes lacking consent.
        scopes: Vec<String>,
    },
    /// It did not answer in time.
    TimedOut {
        /// The deadline in milliseconds.
        after_ms: u64,
    },
    /// It crashed.
    Crashed {
        /// What the host saw.
        detail: String,
    },
    /// It answered with an `error`.
    Error {
        /// The wire code.
        code: String,
        /// The provider's message.
        message: String,
    },
}

impl OutcomeAudit {
    /// The outcome's status word, the one vocabulary every report uses.
    pub fn status(&self) -> OutcomeStatus {
        match self {
            OutcomeAudit::Accepted => OutcomeStatus::Accepted,
            OutcomeAudit::Quarantined { .. } => OutcomeStatus::Quarantined,
            OutcomeAudit::ConsentMissing { .. } => OutcomeStatus::ConsentRequired,
            OutcomeAudit::TimedOut { .. } => OutcomeStatus::TimedOut,
            OutcomeAudit::Crashed { .. } => OutcomeStatus::Crashed,
            OutcomeAudit::Error { .. } => OutcomeStatus::Error,
        }
    }
}

/// One offered frame and what became of it.
///
/// JSON: `{"frame":{FrameId},"content_sha256":"sha256:…","token_cost":12,
/// "included":{…}}` or `{…,"excluded":{"reason":"…",…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameAudit {
    /// The frame as its provider served it (the digest is the declared one).
    pub frame: FrameId,
    /// The digest recomputed from the content, when the composer hashed it
    /// (not for frames excluded before dedup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_sha256: Option<ContentSha256>,
    /// Recomputed `token_cost` of its content (B3), whatever it declared.
    pub token_cost: u32,
    /// Included or excluded.
    #[serde(flatten)]
    pub status: FrameStatus,
}

/// Included or excluded (JSON: the key `included` or `excluded`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameStatus {
    /// In the prompt.
    Included(Inclusion),
    /// Not in the prompt, and why.
    Excluded(Exclusion),
}

/// Where an included frame is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inclusion {
    /// The label it is cited by (unique in the prompt).
    pub label: String,
    /// 0-based position of its block in the prompt.
    pub position: u32,
    /// Budget tokens charged for its whole block (fence and escapes included).
    pub charge: u32,
}

/// Why a frame is not in the prompt (JSON tag `reason`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Exclusion {
    /// Collapsed into another frame (D2 dedup); its provenance is in that frame's citation.
    Duplicate {
        /// The frame that represents the group.
        of: FrameId,
        /// Why they are the same.
        basis: DuplicateBasis,
    },
    /// It did not fit what was left of the budget.
    OverBudget {
        /// At least this many budget tokens for its block.
        charge: u32,
        /// What was left when composition finished (less than `charge`).
        remaining: u32,
    },
    /// Its provider's answer was quarantined (B2).
    ProviderQuarantined {
        /// The anchors the answer broke.
        anchors: Vec<String>,
    },
    /// A `reference` frame the host could not rehydrate (P3): it contributes nothing.
    UnresolvableReference {
        /// What went wrong.
        detail: String,
    },
    /// A frame that is not a reference yet carries no content (P1, P2).
    NoContent,
    /// A kind outside the family (U2), kept opaque and dropped.
    UnknownKind {
        /// The kind as sent.
        kind: String,
    },
    /// Its declared `content_digest` is not the digest of its content (D1):
    /// it cannot be trusted, nor allowed to claim another frame's identity.
    DigestMismatch {
        /// What it declared.
        declared: String,
        /// What the content hashes to.
        actual: String,
    },
    /// Its provider served more than one frame under this id (D2); all of them are dropped.
    DuplicateId,
}

/// Why two frames collapsed into one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DuplicateBasis {
    /// Byte-identical content (digest recomputed by the composer).
    SameContent,
    /// `file` provenance naming the same or an overlapping region of the same
    /// URI, directly or through other frames of the group.
    OverlappingRegion,
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exclusion::Duplicate { of, basis } => {
                let why = match basis {
                    DuplicateBasis::SameContent => "has the same content",
                    DuplicateBasis::OverlappingRegion => "covers an overlapping file region",
                };
                write!(
                    f,
                    "duplicate of {of}: it {why} (D2); its provenance is merged into that frame's citation"
                )
            }
            Exclusion::OverBudget { charge, remaining } => write!(
                f,
                "over budget: its block needs at least {charge} budget tokens and {remaining} were left; \
                 raise the budget or lower the provider's max_tokens"
            ),
            Exclusion::ProviderQuarantined { anchors } => write!(
                f,
                "provider quarantined for {} (B2): the whole answer was dropped; fix the provider or stop using it",
                anchors.join(", ")
            ),
            Exclusion::UnresolvableReference { detail } => write!(
                f,
                "unresolvable reference (P3): {detail}; ask the provider for `full` frames"
            ),
            Exclusion::NoContent => f.write_str(
                "no content (P1): a full or compact frame must carry content; report it to the provider",
            ),
            Exclusion::UnknownKind { kind } => write!(
                f,
                "unknown kind {kind:?} (U2): dropped as opaque; narrow the query's kinds"
            ),
            Exclusion::DigestMismatch { declared, actual } => write!(
                f,
                "content_digest {declared} is not the digest of its content, {actual} (D1); \
                 the provider's answer should be quarantined"
            ),
            Exclusion::DuplicateId => f.write_str(
                "its provider served several frames under this id (D2); all were dropped, report it to the provider",
            ),
        }
    }
}

impl FrameAudit {
    /// One line for a person: which frame, from which provider, and what became of it.
    pub fn explain(&self) -> String {
        match &self.status {
            FrameStatus::Included(i) => format!(
                "{}: included at position {} as [{}], {} budget tokens",
                self.frame, i.position, i.label, i.charge
            ),
            FrameStatus::Excluded(e) => format!(
                "{} (provider {}): excluded, {e}",
                self.frame, self.frame.provider_id
            ),
        }
    }

    /// Whether the frame is in the prompt.
    pub fn is_included(&self) -> bool {
        matches!(self.status, FrameStatus::Included(_))
    }

    /// The exclusion, if excluded.
    pub fn exclusion(&self) -> Option<&Exclusion> {
        match &self.status {
            FrameStatus::Excluded(e) => Some(e),
            FrameStatus::Included(_) => None,
        }
    }
}

impl fmt::Display for OutcomeAudit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutcomeAudit::Accepted => f.write_str("accepted"),
            OutcomeAudit::Quarantined { anchors, .. } => write!(
                f,
                "quarantined for {} (B2); fix the provider or stop using it",
                anchors.join(", ")
            ),
            OutcomeAudit::ConsentMissing { scopes } if scopes.is_empty() => f.write_str(
                "consent missing for egress (C1, C2): nothing was sent; grant consent to use it",
            ),
            OutcomeAudit::ConsentMissing { scopes } => write!(
                f,
                "consent missing for scopes {} (C6): nothing was sent; grant consent to use it",
                scopes.join(", ")
            ),
            OutcomeAudit::TimedOut { after_ms } => write!(
                f,
                "timed out after {after_ms} ms: contributed nothing; retry or raise the deadline"
            ),
            OutcomeAudit::Crashed { detail } => write!(
                f,
                "crashed ({detail}): contributed nothing; respawn it or check its logs"
            ),
            OutcomeAudit::Error { code, message } => {
                write!(f, "answered error {code}: {message}; contributed nothing")
            }
        }
    }
}

impl ProviderAudit {
    /// One line for a person about this provider.
    pub fn explain(&self) -> String {
        let mut line = format!(
            "provider {}: {}; {} of {} frames included, {} budget tokens (share {})",
            self.provider_id,
            self.outcome,
            self.frames_included,
            self.frames_offered,
            self.used,
            self.share
        );
        for r in &self.repairs {
            line.push_str("; ");
            line.push_str(&r.to_string());
        }
        line
    }
}
