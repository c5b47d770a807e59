//! The composition pipeline: per-frame checks ([`candidates`]), content
//! hashing ([`hashing`]), dedup, the blocks and their labels ([`blocks`]),
//! the budget split and packing ([`pack`]), placement, fencing, and the
//! audit of all of it ([`report`]).

use contextgraph_types::{ContextFrame, FrameId, Provenance, UsageReport};
use serde::{Deserialize, Serialize};
use std::fmt;

use crate::audit::{Audit, BudgetAudit, FrameAudit};
use crate::dedup::{group, Region};
use crate::fence::{render_blocks, Block};
use crate::keys::Keyer;
use crate::outcome::ProviderOutcome;
use crate::parallel::Workers;

mod blocks;
mod candidates;
mod hashing;
mod options;
mod pack;
mod report;

pub use options::Options;

use blocks::Blocks;
use candidates::candidates;
use pack::{pack, Split};
use report::{citation, frame_entries, provider_reports, served_frames};

/// Turns a `reference` frame (P3) back into content. A host that cannot
/// resolve references passes nothing ([`compose`]) and such frames are
/// reported as unresolvable. Rehydrated bytes are accepted only if they hash
/// to the frame's `canonical_content_hash`.
pub trait Rehydrate {
    /// The full content behind `frame`, served by `provider_id`, if the host can get it.
    fn rehydrate(&self, provider_id: &str, frame: &ContextFrame) -> Option<String>;
}

struct NoRehydration;

impl Rehydrate for NoRehydration {
    fn rehydrate(&self, _: &str, _: &ContextFrame) -> Option<String> {
        None
    }
}

/// How the model can cite a frame, and what the citation stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    /// The label, unique in the prompt, exactly as the `label` attribute
    /// holds it (unescaped).
    pub label: String,
    /// The frame rendered under this label (A1 attribution handle).
    pub frame: FrameId,
    /// The union of the provenance of the frame and of every duplicate merged into it.
    pub provenance: Vec<Provenance>,
    /// The duplicates merged into it, in canonical order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<FrameId>,
}

/// The result of composing: the prompt block, its citation map, the audit
/// and the UR1 usage report. See the crate docs for the JSON shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Composition {
    /// The fenced prompt block ([`crate::fence`] format); empty if no frame fit.
    pub prompt: String,
    /// One citation per block, in prompt order.
    pub citations: Vec<Citation>,
    /// What happened to every provider and every offered frame.
    pub audit: Audit,
    /// UR1: `budget_consumed` = Σ recomputed `token_cost` of the included frames.
    pub usage: UsageReport,
}

/// A composition the host asked for cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComposeError {
    /// Two outcomes name the same provider: FrameIds would be ambiguous (A1).
    DuplicateProvider {
        /// The provider id given twice.
        provider_id: String,
    },
}

impl fmt::Display for ComposeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComposeError::DuplicateProvider { provider_id } => write!(
                f,
                "provider {provider_id:?} has two outcomes: FrameIds would be ambiguous (A1); \
                 pass one outcome per provider id"
            ),
        }
    }
}

impl std::error::Error for ComposeError {}

/// Compose `outcomes` into a prompt under `options`, without rehydrating
/// reference frames. See [`compose_with`].
pub fn compose(
    outcomes: &[ProviderOutcome],
    options: &Options,
) -> Result<Composition, ComposeError> {
    compose_with(outcomes, options, &NoRehydration)
}

/// Compose `outcomes` into a prompt under `options`.
///
/// The result depends only on the set of frames and outcomes, never on the
/// order they are given in, and the same input always yields the same bytes.
/// Linear in the total content size (every candidate is hashed once), plus
/// `O(n log n)` sorting in the number of frames.
pub fn compose_with(
    outcomes: &[ProviderOutcome],
    options: &Options,
    rehydrator: &dyn Rehydrate,
) -> Result<Composition, ComposeError> {
    let providers = providers_in_order(outcomes)?;
    let keyer = Keyer::new();
    // Frames of quarantined providers and ids served twice (usually none):
    // their entries are merged into canonical order at the end.
    let mut early: Vec<FrameAudit> = Vec::new();
    let mut regions: Vec<Region<'_>> = Vec::new();
    let workers = Workers::new(options.threads);
    let (entries, candidates) = candidates(
        &providers,
        rehydrator,
        &keyer,
        workers,
        &mut early,
        &mut regions,
    );
    let groups = group(&candidates, &regions);
    let provider_ids: Vec<&str> = providers.iter().map(|p| p.provider_id.as_str()).collect();
    let blocks = Blocks::new(
        &candidates,
        &groups,
        &keyer,
        &provider_ids,
        options.budget.in_budget_tokens(),
    );

    // Global budget, preamble reserved, split by water-filling on demand;
    // packed in priority order, exact charges only for blocks that might fit.
    let split = Split::new(options, &providers, &blocks);
    let priority = blocks.priority(options.placement);
    let packing = pack(
        &blocks.lower_bound,
        |g| blocks.exact_charge(g),
        |g| blocks.provider(g),
        &blocks.layout.declaration,
        &split.shares,
        &priority,
        split.capacity,
    );

    let placed = blocks.placed(options.placement, &priority, &packing.included);
    let rendered: Vec<Block<'_>> = placed.iter().map(|&g| blocks.block(g)).collect();
    let prompt = render_blocks(&rendered, blocks.layout.token_len);
    drop(rendered);
    let citations: Vec<Citation> = placed
        .iter()
        .map(|&g| {
            citation(
                &candidates,
                &entries,
                &groups.members,
                &groups.groups[g],
                &blocks.labels[g],
            )
        })
        .collect();

    // Budget totals.
    let blocks_used: u32 = packing.used_by.iter().sum();
    let used = if placed.is_empty() {
        0
    } else {
        split.preamble + blocks_used
    };
    let content: u64 = placed.iter().map(|&g| u64::from(blocks.rep(g).cost)).sum();

    let served = served_frames(&blocks, &entries, &packing.included, providers.len());
    let entries = frame_entries(entries, early, &blocks, &packing, &placed);
    let (provider_audits, usage) = provider_reports(&providers, served, &split, &packing.used_by);
    let requested = split.requested;
    Ok(Composition {
        prompt,
        citations,
        audit: Audit {
            placement: options.placement,
            budget: BudgetAudit {
                given: options.budget,
                requested,
                preamble: split.preamble,
                used,
                content,
                remaining: requested - used,
            },
            providers: provider_audits,
            frames: entries,
        },
        usage: UsageReport::from_providers(requested, options.as_of.clone(), usage),
    })
}

/// The outcomes sorted by provider id, refusing duplicate ids.
fn providers_in_order(outcomes: &[ProviderOutcome]) -> Result<Vec<&ProviderOutcome>, ComposeError> {
    let mut providers: Vec<&ProviderOutcome> = outcomes.iter().collect();
    providers.sort_by(|a, b| a.provider_id.cmp(&b.provider_id));
    if let Some(pair) = providers
        .windows(2)
        .find(|w| w[0].provider_id == w[1].provider_id)
    {
        return Err(ComposeError::DuplicateProvider {
            provider_id: pair[0].provider_id.clone(),
        });
    }
    Ok(providers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;

    #[test]
    fn an_empty_composition_is_empty_and_coherent() {
        let c = compose(&[], &Options::new(Budget::budget_tokens(100))).unwrap();
        assert_eq!(c.prompt, "");
        assert!(c.usage.is_coherent());
        assert_eq!(c.audit.budget.used, 0);
    }
}
