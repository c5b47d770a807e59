//! The budget: one global budget, the preamble reserved, the rest split
//! across providers by weighted water-filling on what each can use, then
//! blocks packed into the shares and the leftovers.

use contextgraph_types::token_cost_of_len;

use crate::budget::{water_fill, Claim};
use crate::fence::PREAMBLE;
use crate::outcome::ProviderOutcome;

use super::blocks::Blocks;
use super::Options;

/// The global budget and its split across providers (provider-id order).
pub(super) struct Split {
    /// The whole budget, in budget tokens.
    pub requested: u32,
    /// What the constant preamble costs.
    pub preamble: u32,
    /// What is left for blocks.
    pub capacity: u32,
    /// Each provider's weight.
    pub weights: Vec<u32>,
    /// What each provider could use: the lower bounds of its blocks, plus
    /// naming it once.
    pub demand: Vec<u64>,
    /// Each provider's share of `capacity`.
    pub shares: Vec<u32>,
}

impl Split {
    /// Reserve the preamble and split the rest by water-filling on demand.
    pub fn new(options: &Options, providers: &[&ProviderOutcome], blocks: &Blocks<'_, '_>) -> Self {
        let requested = options.budget.in_budget_tokens();
        let preamble = token_cost_of_len(PREAMBLE.len());
        let capacity = requested.saturating_sub(preamble);
        let mut demand = vec![0u64; providers.len()];
        for (g, lb) in blocks.lower_bound.iter().enumerate() {
            demand[blocks.provider(g)] += u64::from(*lb);
        }
        for (p, d) in demand.iter_mut().enumerate() {
            if *d > 0 {
                *d += u64::from(blocks.layout.declaration[p]);
            }
        }
        let weights: Vec<u32> = providers
            .iter()
            .map(|p| options.weight_of(&p.provider_id))
            .collect();
        let claims: Vec<Claim> = weights
            .iter()
            .zip(&demand)
            .map(|(&weight, &demand)| Claim { weight, demand })
            .collect();
        let shares = water_fill(capacity, &claims);
        Split {
            requested,
            preamble,
            capacity,
            weights,
            demand,
            shares,
        }
    }
}

/// What packing decided, per group and per provider.
pub(super) struct Packing {
    /// Whether each group's block is in the prompt.
    pub included: Vec<bool>,
    /// Each group's exact charge, where it was worth computing.
    pub charge: Vec<Option<u32>>,
    /// What naming its provider cost, for the group that paid for it (the
    /// first of its provider packed), else 0.
    pub declaration: Vec<u32>,
    /// Charged per provider.
    pub used_by: Vec<u32>,
    /// Budget tokens left for blocks at the end.
    pub room: u32,
}

/// Pack groups (in `priority` order) under `capacity`: first each provider
/// within its share, then whatever is left from any provider, so unused
/// shares are not wasted. The leftover pass goes round by round: every
/// provider's n-th block (in priority order) is tried before any
/// provider's (n+1)-th, in priority order within a round. With many
/// providers (fifty shards) a share is often smaller than any one block, so
/// this pass places nearly everything; in plain score order the provider
/// declaring the highest scores (each provider's own, not comparable across
/// providers) would take the whole budget. A block is tried only if its `lower_bound` fits,
/// and its `exact` charge is computed at most once. The first block of a
/// provider to be included also pays for naming the provider
/// (`declaration`, per provider): the prompt names each provider once,
/// whichever of its blocks comes first, so the total is exact.
pub(super) fn pack(
    lower_bound: &[u32],
    exact: impl Fn(usize) -> u32,
    provider_of: impl Fn(usize) -> usize,
    declaration_of: &[u32],
    shares: &[u32],
    priority: &[usize],
    capacity: u32,
) -> Packing {
    let mut included = vec![false; lower_bound.len()];
    let mut charge: Vec<Option<u32>> = vec![None; lower_bound.len()];
    let mut declaration = vec![0u32; lower_bound.len()];
    let mut named = vec![false; shares.len()];
    let mut used_by = vec![0u32; shares.len()];
    let mut try_include = |g: usize, room: &mut u32, included: &mut [bool]| -> Option<u32> {
        let p = provider_of(g);
        let naming = if named[p] { 0 } else { declaration_of[p] };
        if lower_bound[g].saturating_add(naming) > *room {
            return None;
        }
        let c = charge[g]
            .get_or_insert_with(|| exact(g))
            .saturating_add(naming);
        if c > *room {
            return None;
        }
        *room -= c;
        included[g] = true;
        named[p] = true;
        declaration[g] = naming;
        Some(c)
    };
    let mut room_by = shares.to_vec();
    for &g in priority {
        let p = provider_of(g);
        if let Some(c) = try_include(g, &mut room_by[p], &mut included) {
            used_by[p] += c;
        }
    }
    // Shares sum to at most `capacity`, and each provider used at most its share.
    let mut room = capacity.saturating_sub(used_by.iter().sum::<u32>());
    let mut seen = vec![0usize; shares.len()];
    let mut rounds: Vec<(usize, usize)> = priority
        .iter()
        .map(|&g| {
            let p = provider_of(g);
            seen[p] += 1;
            (seen[p] - 1, g)
        })
        .filter(|&(_, g)| !included[g])
        .collect();
    // Stable: priority order within a round.
    rounds.sort_by_key(|&(round, _)| round);
    for (_, g) in rounds {
        if let Some(c) = try_include(g, &mut room, &mut included) {
            used_by[provider_of(g)] += c;
        }
    }
    Packing {
        included,
        charge,
        declaration,
        used_by,
        room,
    }
}
