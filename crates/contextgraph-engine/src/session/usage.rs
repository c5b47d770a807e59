//! UR1 for a session turn: what the call actually sent.

use std::collections::BTreeMap;

use contextgraph_types::{ProviderUsage, ServedFrame, UsageReport};

/// UR1 for what a turn sent: the composition's report with each provider's
/// served frames replaced by the ones actually sent (costs recomputed, B3).
pub(super) fn call_usage(
    composed: &UsageReport,
    mut served: BTreeMap<String, Vec<ServedFrame>>,
) -> UsageReport {
    let mut providers: Vec<ProviderUsage> = composed
        .providers
        .iter()
        .map(|p| ProviderUsage {
            provider_id: p.provider_id.clone(),
            frames_rejected: p.frames_rejected,
            served_frames: served.remove(&p.provider_id).unwrap_or_default(),
            ..ProviderUsage::default()
        })
        .collect();
    for (provider_id, frames) in served {
        providers.push(ProviderUsage {
            provider_id,
            served_frames: frames,
            ..ProviderUsage::default()
        });
    }
    UsageReport::from_providers(composed.budget_requested, composed.as_of.clone(), providers)
}
