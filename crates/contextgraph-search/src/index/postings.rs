//! Postings: per term, the `(slot, tf)` pairs (a frozen arena as loaded
//! plus per-term tails added since), and their inversion per slot.

use super::Index;

/// `doc_lens` marker of a tombstoned slot (one array says both "alive" and
/// "how long", so the postings loop touches a single cache line per entry).
pub(super) const DEAD: u32 = u32::MAX;

/// A run of `(slot, tf)` postings.
type PostingRun<'a> = &'a [(u32, u32)];

#[derive(Debug, Default, Clone)]
pub(super) struct Posting {
    /// Live documents containing the term.
    pub(super) df: u32,
    /// Range of the frozen arena holding this term's loaded postings.
    pub(super) frozen: (u32, u32),
    /// `(slot, tf)` added since the load, in slot order; dead slots included
    /// until compaction.
    pub(super) extra: Vec<(u32, u32)>,
}

/// Per slot, the ids of its terms: the postings inverted. Only removal and
/// [`Index::chunk_terms`] need it, so it is built on first use (or in the
/// background, [`Index::warm_up`]), not during a load. Built at any time it
/// is exact (it derives from the postings as they are), and once built every
/// upsert extends it.
#[derive(Debug, Default, Clone)]
pub(super) struct SlotTerms {
    /// Per slot: start of its term ids in `ids` (one extra at the end).
    pub(super) start: Vec<usize>,
    pub(super) ids: Vec<u32>,
}

impl Index {
    /// A live slot's own-text term frequencies, sorted by term.
    pub fn chunk_terms(&self, slot: u32) -> Vec<(String, u32)> {
        let Some((a, b)) = self.slot_term_range(slot) else {
            return Vec::new();
        };
        let mut out: Vec<(String, u32)> = self.slot_terms().ids[a..b]
            .iter()
            .filter_map(|&id| {
                let tf = self.tf_of(id, slot)?;
                Some((self.dict.term(id)?.to_owned(), tf))
            })
            .collect();
        out.sort_unstable();
        out
    }

    pub(super) fn slot_term_range(&self, slot: u32) -> Option<(usize, usize)> {
        let i = slot as usize;
        let start = &self.slot_terms().start;
        Some((*start.get(i)?, *start.get(i + 1)?))
    }

    /// The slot → term ids inversion, built from the postings on first use.
    pub(super) fn slot_terms(&self) -> &SlotTerms {
        self.slot_terms.get_or_init(|| {
            let n_slots = self.slots.len();
            let mut counts: Vec<usize> = vec![0; n_slots];
            let runs = || {
                self.postings.iter().enumerate().flat_map(|(id, p)| {
                    let frozen = self
                        .arena
                        .get(p.frozen.0 as usize..p.frozen.1 as usize)
                        .unwrap_or(&[]);
                    frozen.iter().chain(&p.extra).map(move |e| (id as u32, e.0))
                })
            };
            for (_, s) in runs() {
                if let Some(c) = counts.get_mut(s as usize) {
                    *c += 1;
                }
            }
            let mut start: Vec<usize> = Vec::with_capacity(n_slots + 1);
            let mut acc = 0usize;
            for c in &counts {
                start.push(acc);
                acc += c;
            }
            start.push(acc);
            let mut fill = start.clone();
            let mut ids = vec![0u32; acc];
            for (id, s) in runs() {
                if let Some(at) = fill.get_mut(s as usize) {
                    ids[*at] = id;
                    *at += 1;
                }
            }
            SlotTerms { start, ids }
        })
    }

    pub(super) fn tf_of(&self, id: u32, slot: u32) -> Option<u32> {
        let p = self.postings.get(id as usize)?;
        let frozen = &self.arena[p.frozen.0 as usize..p.frozen.1 as usize];
        [frozen, p.extra.as_slice()].into_iter().find_map(|list| {
            list.binary_search_by_key(&slot, |e| e.0)
                .ok()
                .map(|i| list[i].1)
        })
    }

    /// Number of live chunks containing `term`.
    pub fn df(&self, term: &str) -> u32 {
        self.dict
            .get(term)
            .and_then(|id| self.postings.get(id as usize))
            .map_or(0, |p| p.df)
    }

    /// Live postings of `term`: `(slot, tf, doc_len)`.
    pub fn postings(&self, term: &str) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        let (frozen, extra): (PostingRun<'_>, PostingRun<'_>) = match self
            .dict
            .get(term)
            .and_then(|id| self.postings.get(id as usize))
        {
            Some(p) => (
                &self.arena[p.frozen.0 as usize..p.frozen.1 as usize],
                &p.extra,
            ),
            None => (&[], &[]),
        };
        frozen.iter().chain(extra).filter_map(move |&(s, tf)| {
            let len = self.doc_lens[s as usize];
            (len != DEAD).then_some((s, tf, len))
        })
    }
}
