//! How to compose: the budget, the placement, the weights of the split and
//! the threads of the per-frame passes.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use crate::budget::Budget;
use crate::placement::Placement;

/// How to compose.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The one budget for the whole prompt (preamble, fences and content).
    pub budget: Budget,
    /// Stable (byte-identical, canonical order) or ranked (best at the edges).
    pub placement: Placement,
    /// Per-provider weights for the budget split; absent providers weigh 1.
    pub weights: BTreeMap<String, u32>,
    /// The instant retrieval was pinned to, copied into the usage report.
    pub as_of: Option<String>,
    /// Threads for the per-frame passes (checks and SHA-256 of every
    /// candidate): `None` uses what the machine offers (at most 8). The
    /// result is identical for any value; only the time it takes changes.
    pub threads: Option<NonZeroUsize>,
}

impl Options {
    /// Stable placement, equal weights, no `as_of`.
    pub fn new(budget: Budget) -> Self {
        Options {
            budget,
            placement: Placement::Stable,
            weights: BTreeMap::new(),
            as_of: None,
            threads: None,
        }
    }

    /// The same options with another placement.
    pub fn with_placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// The same options with `provider_id` weighing `weight` in the split.
    pub fn with_weight(mut self, provider_id: impl Into<String>, weight: u32) -> Self {
        self.weights.insert(provider_id.into(), weight);
        self
    }

    /// The same options with an `as_of` for the usage report.
    pub fn with_as_of(mut self, as_of: impl Into<String>) -> Self {
        self.as_of = Some(as_of.into());
        self
    }

    /// The same options with at most `threads` threads for the per-frame
    /// passes (0 is taken as 1: everything on the calling thread).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = Some(NonZeroUsize::new(threads).unwrap_or(NonZeroUsize::MIN));
        self
    }

    pub(crate) fn weight_of(&self, provider_id: &str) -> u32 {
        self.weights.get(provider_id).copied().unwrap_or(1)
    }
}
