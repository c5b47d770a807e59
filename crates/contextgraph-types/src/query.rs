//! The retrieval request and its result.

use serde::{Deserialize, Serialize};

use crate::frame::{ContextFrame, FrameKind, Representation};
use crate::serde_util::null_as_default;

/// A request for frames relevant to a goal, under a hard budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextQuery {
    /// The task or turn goal driving retrieval.
    pub goal: String,
    /// Text to match, when different from the goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_text: Option<String>,
    /// Query vector; sent only on an exact fingerprint match (E1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
    /// Kinds wanted; empty (omitted) means any kind (Q1).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub kinds: Vec<FrameKind>,
    /// URIs the host considers focal (G3, G4); omitted when empty.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub anchors: Vec<String>,
    /// Most frames the answer may carry (B4).
    pub max_frames: u32,
    /// Most budget tokens the answer may cost (B1).
    pub max_tokens: u32,
    /// Pin retrieval to an instant (F4 timestamp): nothing dated after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// Ordered representation preference; empty (omitted) means `[full]`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub representation_preferences: Vec<Representation>,
}

impl ContextQuery {
    /// A query for `goal` with the given budget and no filters.
    pub fn new(goal: impl Into<String>, max_frames: u32, max_tokens: u32) -> Self {
        ContextQuery {
            goal: goal.into(),
            query_text: None,
            embedding: None,
            kinds: Vec::new(),
            anchors: Vec::new(),
            max_frames,
            max_tokens,
            as_of: None,
            representation_preferences: Vec::new(),
        }
    }

    /// The text to match: `query_text` when given and non-blank, else `goal`.
    pub fn match_text(&self) -> &str {
        match self.query_text.as_deref() {
            Some(t) if !t.trim().is_empty() => t,
            _ => &self.goal,
        }
    }

    /// Q1: whether a frame of `kind` may be returned for this query.
    pub fn accepts_kind(&self, kind: &FrameKind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(kind)
    }

    /// The preference list in force: the given one, or `[full]` when empty.
    pub fn effective_preferences(&self) -> Vec<Representation> {
        if self.representation_preferences.is_empty() {
            vec![Representation::Full]
        } else {
            self.representation_preferences.clone()
        }
    }

    /// The first preferred representation among `offered`, if any (P5).
    pub fn select_representation(&self, offered: &[Representation]) -> Option<Representation> {
        self.effective_preferences()
            .into_iter()
            .find(|r| offered.contains(r))
    }
}

/// A provider's answer to a query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextQueryResult {
    /// The frames, in the provider's order.
    pub frames: Vec<ContextFrame>,
    /// More candidates existed than fit the budget.
    pub truncated: bool,
    /// How many candidates were left out, when the provider knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_estimate: Option<u32>,
}

impl ContextQueryResult {
    /// Σ `token_cost` of the returned frames, in u64 so a lying provider
    /// cannot overflow it into looking honest.
    pub fn total_token_cost(&self) -> u64 {
        self.frames.iter().map(|f| u64::from(f.token_cost)).sum()
    }

    /// B1: whether the declared costs fit `max_tokens`.
    pub fn respects_budget(&self, max_tokens: u32) -> bool {
        self.total_token_cost() <= u64::from(max_tokens)
    }

    /// B4: whether the frame count fits `max_frames`.
    pub fn respects_frame_limit(&self, max_frames: u32) -> bool {
        self.frames.len() as u64 <= u64::from(max_frames)
    }
}
