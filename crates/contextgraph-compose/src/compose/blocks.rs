//! The blocks to render, one per dedup group: the label each one gets, its
//! fence attributes, the bounds on its charge, and the order the placement
//! gives them.

use contextgraph_types::token_cost_of_len;
use std::borrow::Cow;

use crate::dedup::{Candidate, Groups};
use crate::fence::{
    block_len_lower_bound_of, block_len_without_content, escaped_content_len, FenceAttributes,
    BLOCK_SEPARATOR,
};
use crate::keys::Keyer;
use crate::labels::{disambiguate, LabelRequest};
use crate::placement::{edges_first, Placement};

/// One block per group, represented by the group's representative.
pub(super) struct Blocks<'c, 'a> {
    /// The candidates, canonical order.
    pub candidates: &'c [Candidate<'a>],
    /// Their dedup groups.
    pub groups: &'c Groups,
    /// Each group's label, unique in the prompt.
    pub labels: Vec<Cow<'a, str>>,
    /// Each group's charge from unescaped sizes: never above the exact one.
    pub lower_bound: Vec<u32>,
}

impl<'c, 'a> Blocks<'c, 'a> {
    /// Settle the labels over every group, before packing, so that a block's
    /// size (and so its charge) is known exactly and depends only on the
    /// set; then each block's lower bound (no scan of the content, and no
    /// visit to the frame: its fixed attributes were measured while building).
    pub fn new(candidates: &'c [Candidate<'a>], groups: &'c Groups, keyer: &Keyer) -> Self {
        let requests: Vec<LabelRequest<'a>> = groups
            .groups
            .iter()
            .map(|(_, rep)| {
                let c = &candidates[*rep];
                LabelRequest {
                    raw: c.label,
                    provider_id: c.provider_id,
                    frame_id: &c.frame.id,
                }
            })
            .collect();
        let labels = disambiguate(&requests, keyer);
        drop(requests);
        let lower_bound: Vec<u32> = groups
            .groups
            .iter()
            .zip(&labels)
            .map(|((_, rep), label)| {
                let c = &candidates[*rep];
                let values = c.attributes_len + label.len();
                token_cost_of_len(
                    block_len_lower_bound_of(values, c.body.len()) + BLOCK_SEPARATOR.len(),
                )
            })
            .collect();
        Blocks {
            candidates,
            groups,
            labels,
            lower_bound,
        }
    }

    /// How many blocks (groups) there are.
    #[inline]
    pub fn len(&self) -> usize {
        self.groups.groups.len()
    }

    /// Group `g`'s representative.
    #[inline]
    pub fn rep(&self, g: usize) -> &'c Candidate<'a> {
        &self.candidates[self.groups.groups[g].1]
    }

    /// The provider (index in provider-id order) of group `g`'s block.
    #[inline]
    pub fn provider(&self, g: usize) -> usize {
        self.rep(g).provider
    }

    /// The content group `g`'s block renders.
    #[inline]
    pub fn body(&self, g: usize) -> &'c str {
        self.rep(g).body.as_ref()
    }

    /// The fence attributes of group `g`'s block.
    #[inline]
    pub fn attributes(&self, g: usize) -> FenceAttributes<'_> {
        let c = self.rep(g);
        FenceAttributes {
            provider: c.provider_id,
            id: &c.frame.id,
            kind: c.frame.kind.as_str(),
            label: &self.labels[g],
            title: &c.frame.title,
        }
    }

    /// Group `g`'s exact charge: its rendered size, escapes included (scans
    /// the content, so computed only for blocks that might fit).
    pub fn exact_charge(&self, g: usize) -> u32 {
        token_cost_of_len(
            block_len_without_content(&self.attributes(g))
                + escaped_content_len(self.body(g))
                + BLOCK_SEPARATOR.len(),
        )
    }

    /// The order packing tries the blocks in: canonical order (stable), or
    /// score then canonical (ranked).
    pub fn priority(&self, placement: Placement) -> Vec<usize> {
        let n_groups = self.len();
        match placement {
            Placement::Stable => (0..n_groups).collect(),
            Placement::Ranked => {
                // Sort (score, group) pairs held side by side: a comparator that
                // looked each score up through the group table would miss the
                // cache on every comparison. Group indices are distinct, so an
                // unstable sort gives the same order as a stable one.
                let mut keyed: Vec<(f32, usize)> =
                    (0..n_groups).map(|g| (self.rep(g).score, g)).collect();
                keyed.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                keyed.into_iter().map(|(_, g)| g).collect()
            }
        }
    }

    /// The included blocks in prompt order: canonical (stable), or best at
    /// the edges and weakest in the middle (ranked).
    pub fn placed(
        &self,
        placement: Placement,
        priority: &[usize],
        included: &[bool],
    ) -> Vec<usize> {
        match placement {
            Placement::Stable => (0..self.len()).filter(|&g| included[g]).collect(),
            Placement::Ranked => {
                edges_first(priority.iter().copied().filter(|&g| included[g]).collect())
            }
        }
    }
}
