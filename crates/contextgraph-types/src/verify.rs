//! Cache revalidation (V1–V4): identities in, verdicts out, never bodies.

use serde::{Deserialize, Serialize};

use crate::identity::FrameId;

/// Host → provider: are these held frames still what you serve? Identities only (V1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyRequest {
    /// The identities to check.
    pub frames: Vec<FrameId>,
}

/// Provider → host: one verdict per identity it answers for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyResponse {
    /// The verdicts; an identity with no verdict counts as `unknown` (V2).
    pub verdicts: Vec<FrameVerdict>,
}

impl VerifyResponse {
    /// The verdict for `id`, matched on the full identity; `Unknown` when the
    /// provider gave none (V2: silence is not validity).
    pub fn verdict_for(&self, id: &FrameId) -> Verdict {
        self.verdicts
            .iter()
            .find(|v| &v.frame == id)
            .map(|v| v.verdict.clone())
            .unwrap_or(Verdict::Unknown)
    }
}

/// One verdict, flattened onto the identity it answers (echoed in full so
/// verdicts correlate by match, never by position).
///
/// A status this crate does not know reads as [`Verdict::Unknown`]: that is
/// the safe reading (it evicts), and it keeps one odd entry from making the
/// other verdicts of the message unreadable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "WireVerdict")]
pub struct FrameVerdict {
    /// The identity answered.
    pub frame: FrameId,
    /// The answer, flattened: `{"status": …, "replacement_digest"?: …}`.
    #[serde(flatten)]
    pub verdict: Verdict,
}

#[derive(Deserialize)]
struct WireVerdict {
    frame: FrameId,
    status: String,
    #[serde(default)]
    replacement_digest: Option<String>,
}

impl From<WireVerdict> for FrameVerdict {
    fn from(w: WireVerdict) -> Self {
        let verdict = match w.status.as_str() {
            "valid" => Verdict::Valid,
            "stale" => Verdict::Stale {
                replacement_digest: w.replacement_digest,
            },
            "gone" => Verdict::Gone,
            _ => Verdict::Unknown,
        };
        FrameVerdict {
            frame: w.frame,
            verdict,
        }
    }
}

/// A provider's answer for one identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Verdict {
    /// Unchanged: the host may keep reusing its copy (V3: the only verdict that allows reuse).
    Valid,
    /// Changed; may carry the current digest, never a body (V4).
    Stale {
        /// The provider's current digest for the frame.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replacement_digest: Option<String>,
    },
    /// No longer exists.
    Gone,
    /// The provider cannot say; evicts like any non-`valid` verdict.
    Unknown,
}

impl Verdict {
    /// V3: reuse only on an explicit `valid`.
    pub fn allows_reuse(&self) -> bool {
        matches!(self, Verdict::Valid)
    }

    /// The wire status string.
    pub fn status(&self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Stale { .. } => "stale",
            Verdict::Gone => "gone",
            Verdict::Unknown => "unknown",
        }
    }
}
