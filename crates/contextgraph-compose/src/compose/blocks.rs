//! The blocks to render, one per dedup group: the label each one gets, its
//! fence attributes, the prompt's layout (token length, provider numbers),
//! the bounds on each block's charge, and the order the placement gives them.

use contextgraph_types::token_cost_of_len;
use std::borrow::Cow;

use crate::dedup::{Candidate, Groups};
use crate::fence::{
    block_len, escaped_attribute_len, provider_declaration_len, title_adds_to, token_len_for,
    Block, FenceAttributes, BLOCK_SEPARATOR,
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
    /// How the prompt is laid out, settled before packing.
    pub layout: Layout,
}

/// What a block's size depends on beyond itself, fixed before packing so
/// every charge is exact whatever gets included and wherever it is placed.
pub(super) struct Layout {
    /// Digits of the boundary token: enough for any prompt the budget allows
    /// (or for every candidate, if that is less).
    pub token_len: usize,
    /// Each provider's `src` number (providers with at least one block,
    /// numbered from 1 in provider-id order), or `None` for all of them when
    /// only one provider has blocks.
    pub src: Vec<Option<u32>>,
    /// What naming each provider once costs, in budget tokens.
    pub declaration: Vec<u32>,
}

impl Layout {
    fn new(
        candidates: &[Candidate<'_>],
        groups: &Groups,
        labels: &[Cow<'_, str>],
        provider_ids: &[&str],
        budget_tokens: u32,
    ) -> Self {
        let mut has_blocks = vec![false; provider_ids.len()];
        let mut texts = 0usize;
        for ((_, rep), label) in groups.groups.iter().zip(labels) {
            let c = &candidates[*rep];
            has_blocks[c.provider] = true;
            texts = texts.saturating_add(c.body.len() + c.attributes_len + label.len());
        }
        let numbered = has_blocks.iter().filter(|&&b| b).count() > 1;
        let mut next = 0u32;
        let src = has_blocks
            .iter()
            .map(|&b| {
                (numbered && b).then(|| {
                    next += 1;
                    next
                })
            })
            .collect();
        // The token is chosen over rendered text only, which the budget
        // bounds: four bytes per budget token.
        let rendered_at_most = usize::try_from(u64::from(budget_tokens) * 4).unwrap_or(usize::MAX);
        Layout {
            token_len: token_len_for(texts.min(rendered_at_most)),
            src,
            declaration: provider_ids
                .iter()
                .map(|p| token_cost_of_len(provider_declaration_len(p)))
                .collect(),
        }
    }
}

/// The title worth rendering: none unless it adds to the label
/// ([`title_adds_to`]); the citation and the audit keep the frame whole.
fn shown_title<'t>(title: &'t str, label: &str) -> &'t str {
    if title_adds_to(title, label) {
        title
    } else {
        ""
    }
}

impl<'c, 'a> Blocks<'c, 'a> {
    /// Settle the labels over every group, before packing, so that a block's
    /// size (and so its charge) is known exactly and depends only on the
    /// set; then each block's lower bound (no scan of the content, and no
    /// visit to the frame: its fixed attributes were measured while building).
    pub fn new(
        candidates: &'c [Candidate<'a>],
        groups: &'c Groups,
        keyer: &Keyer,
        provider_ids: &[&str],
        budget_tokens: u32,
    ) -> Self {
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
        let layout = Layout::new(candidates, groups, &labels, provider_ids, budget_tokens);
        let lower_bound: Vec<u32> = groups
            .groups
            .iter()
            .zip(&labels)
            .map(|((_, rep), label)| {
                let c = &candidates[*rep];
                let title = shown_title(&c.frame.title, label);
                token_cost_of_len(
                    block_len(
                        layout.token_len,
                        layout.src[c.provider],
                        label.len(),
                        (!title.is_empty()).then_some(title.len()),
                        c.body.len(),
                    ) + BLOCK_SEPARATOR.len(),
                )
            })
            .collect();
        Blocks {
            candidates,
            groups,
            labels,
            lower_bound,
            layout,
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

    /// Group `g`'s block as the fence renders it.
    #[inline]
    pub fn block(&self, g: usize) -> Block<'_> {
        let c = self.rep(g);
        let label: &str = &self.labels[g];
        Block {
            attributes: FenceAttributes {
                provider: c.provider_id,
                label,
                title: shown_title(&c.frame.title, label),
            },
            src: self.layout.src[c.provider],
            content: self.body(g),
        }
    }

    /// Group `g`'s exact charge: its rendered size with attribute escapes,
    /// naming its provider excepted (see [`super::pack::pack`]). Content is
    /// quoted as is, so this reads the attributes only.
    pub fn exact_charge(&self, g: usize) -> u32 {
        let b = self.block(g);
        let a = &b.attributes;
        let title = (!a.title.is_empty()).then(|| escaped_attribute_len(a.title));
        token_cost_of_len(
            block_len(
                self.layout.token_len,
                b.src,
                escaped_attribute_len(a.label),
                title,
                b.content.len(),
            ) + BLOCK_SEPARATOR.len(),
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
