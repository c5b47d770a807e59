//! Usage reports (UR1): what a query consumed, per provider, by FrameId.

use serde::{Deserialize, Serialize};

use crate::identity::FrameId;

/// The usage report of one query a host ran.
///
/// `budget_consumed` is Σ `token_cost` of exactly the frames the report
/// lists (UR1); [`UsageReport::is_coherent`] checks that.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageReport {
    /// The budget the query asked for.
    pub budget_requested: u32,
    /// Σ `token_cost` of the served frames listed below.
    pub budget_consumed: u64,
    /// The instant retrieval was pinned to, if any (F4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// One entry per provider queried.
    pub providers: Vec<ProviderUsage>,
}

/// One provider's share of a usage report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderUsage {
    /// The provider.
    pub provider_id: String,
    /// Frames accepted from it.
    pub frames_served: u32,
    /// Frames it offered that the host rejected.
    pub frames_rejected: u32,
    /// Σ `token_cost` of its served frames.
    pub token_cost: u64,
    /// Each served frame and its cost.
    pub served_frames: Vec<ServedFrame>,
}

/// A served frame in a usage report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedFrame {
    /// The frame.
    pub frame: FrameId,
    /// Its (recomputed) cost.
    pub token_cost: u32,
}

impl UsageReport {
    /// Build a report from per-provider entries, computing every total from the served frames.
    pub fn from_providers(
        budget_requested: u32,
        as_of: Option<String>,
        mut providers: Vec<ProviderUsage>,
    ) -> Self {
        for p in &mut providers {
            p.frames_served = u32::try_from(p.served_frames.len()).unwrap_or(u32::MAX);
            p.token_cost = p
                .served_frames
                .iter()
                .map(|f| u64::from(f.token_cost))
                .sum();
        }
        let budget_consumed = providers.iter().map(|p| p.token_cost).sum();
        UsageReport {
            budget_requested,
            budget_consumed,
            as_of,
            providers,
        }
    }

    /// UR1: every total equals the sum of the frames it covers.
    pub fn is_coherent(&self) -> bool {
        let per_provider_ok = self.providers.iter().all(|p| {
            p.token_cost
                == p.served_frames
                    .iter()
                    .map(|f| u64::from(f.token_cost))
                    .sum::<u64>()
                && p.frames_served as usize == p.served_frames.len()
        });
        per_provider_ok
            && self.budget_consumed == self.providers.iter().map(|p| p.token_cost).sum::<u64>()
    }

    /// Whether the report bills `frame` (A3: attribution must name a billed frame).
    pub fn bills(&self, frame: &FrameId) -> bool {
        self.providers
            .iter()
            .flat_map(|p| &p.served_frames)
            .any(|s| &s.frame == frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_are_computed_from_the_served_frames() {
        let served = |id: &str, cost| ServedFrame {
            frame: FrameId::new("p", id, None),
            token_cost: cost,
        };
        let report = UsageReport::from_providers(
            100,
            None,
            vec![ProviderUsage {
                provider_id: "p".into(),
                frames_rejected: 2,
                served_frames: vec![served("a", 10), served("b", 5)],
                ..ProviderUsage::default()
            }],
        );
        assert_eq!(report.budget_consumed, 15);
        assert_eq!(report.providers[0].frames_served, 2);
        assert!(report.is_coherent());
        assert!(report.bills(&FrameId::new("p", "a", None)));
        let mut lie = report.clone();
        lie.budget_consumed = 14;
        assert!(!lie.is_coherent());
    }
}
