//! Usage reports (UR1) and attribution records (A1–A3) for a fan-out.
//!
//! Costs are recomputed from the content (B3), never copied from the
//! provider's claim: an accepted frame's claim already matched (the audit
//! checked it), and the report must stay true even for a caller that built
//! the fan-out report by hand.

use std::collections::BTreeSet;

use contextgraph_types::{
    token_cost_for, AttributionError, AttributionRecord, FrameId, ProviderUsage, ServedFrame,
    UsageReport,
};

use crate::fanout::{FanOutReport, ProviderOutcome};

/// The usage report of `report`: per provider, the frames served (accepted)
/// with recomputed costs, and the frames rejected (quarantined or dropped as
/// unknown kinds). `budget_consumed` equals the sum of the served costs.
pub fn usage_report(report: &FanOutReport) -> UsageReport {
    let providers = report
        .providers
        .iter()
        .map(|p| {
            let (served_frames, rejected) = match &p.outcome {
                ProviderOutcome::Accepted {
                    frames, dropped, ..
                } => (
                    frames
                        .iter()
                        .map(|f| ServedFrame {
                            frame: f.frame_id(&p.provider_id),
                            token_cost: token_cost_for(f.content.as_deref()),
                        })
                        .collect(),
                    dropped.len(),
                ),
                ProviderOutcome::Quarantined { frames_offered, .. } => {
                    (Vec::new(), *frames_offered)
                }
                _ => (Vec::new(), 0),
            };
            ProviderUsage {
                provider_id: p.provider_id.clone(),
                frames_rejected: u32::try_from(rejected).unwrap_or(u32::MAX),
                served_frames,
                ..ProviderUsage::default()
            }
        })
        .collect();
    UsageReport::from_providers(
        report.query.max_tokens,
        report.query.as_of.clone(),
        providers,
    )
}

/// Attribution records (A1, A2) for every frame `usage` billed, from the sets
/// of frames composition selected and rendered and the model's output cited.
///
/// Fails (A3) when the sets are incoherent — a cited frame that was not
/// rendered, a rendered one not selected — or name a frame the report did
/// not bill.
pub fn attribution_records(
    usage: &UsageReport,
    selected: &[FrameId],
    rendered: &[FrameId],
    cited: &[FrameId],
) -> Result<Vec<AttributionRecord>, AttributionError> {
    let selected: BTreeSet<&FrameId> = selected.iter().collect();
    let rendered: BTreeSet<&FrameId> = rendered.iter().collect();
    let cited: BTreeSet<&FrameId> = cited.iter().collect();
    let billed: BTreeSet<&FrameId> = usage
        .providers
        .iter()
        .flat_map(|p| p.served_frames.iter().map(|s| &s.frame))
        .collect();
    let mut records: Vec<AttributionRecord> = Vec::with_capacity(billed.len());
    for id in selected.iter().chain(&rendered).chain(&cited) {
        if !billed.contains(id) {
            let record = AttributionRecord {
                frame: (*id).clone(),
                selected: selected.contains(id),
                rendered: rendered.contains(id),
                cited: cited.contains(id),
            };
            record.check(usage)?;
            return Err(AttributionError::NotBilled((*id).clone()));
        }
    }
    for id in billed {
        let record = AttributionRecord {
            frame: id.clone(),
            selected: selected.contains(id),
            rendered: rendered.contains(id),
            cited: cited.contains(id),
        };
        record.check(usage)?;
        records.push(record);
    }
    Ok(records)
}

impl FanOutReport {
    /// [`usage_report`] of this fan-out (UR1).
    pub fn usage_report(&self) -> UsageReport {
        usage_report(self)
    }
}
