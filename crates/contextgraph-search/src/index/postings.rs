//! Postings: per term, the `(slot, tf)` pairs (read in place from the
//! snapshot, plus per-term tails added since the load), and their inversion
//! per slot (saved for the snapshot's slots, kept in memory for later ones).

use super::frozen::{PostingList, SlotList};
use super::Index;
use crate::codec::{push_varint, Reader};

/// `doc_lens` marker of a tombstoned slot (one array says both "alive" and
/// "how long", so the postings loop touches a single cache line per entry).
pub(super) const DEAD: u32 = u32::MAX;

/// What changed of a term since the load (or all of it, for a term first
/// seen since).
#[derive(Debug, Default, Clone)]
pub(super) struct Posting {
    /// Live documents containing the term.
    pub(super) df: u32,
    /// `(slot, tf)` added since the load, in slot order; dead slots included
    /// until compaction. Encoded as the snapshot's postings are, as varint
    /// pairs (gap from the previous slot, tf): about 2.5 bytes a pair
    /// instead of 8, on what is, in a cold build, every posting of the
    /// workspace (the largest structure of the build's peak memory).
    added: Vec<u8>,
    /// The slot added last (the base of the next gap).
    last: u32,
}

impl Posting {
    /// A term's changeable part, starting from `df` live documents.
    pub(super) fn with_df(df: u32) -> Posting {
        Posting {
            df,
            ..Posting::default()
        }
    }

    /// Add `(slot, tf)`; `slot` is above every slot added before (slots
    /// are allocated in increasing order).
    pub(super) fn push(&mut self, slot: u32, tf: u32) {
        let gap = slot.checked_sub(self.last).unwrap_or(slot);
        push_varint(&mut self.added, u64::from(gap));
        push_varint(&mut self.added, u64::from(tf));
        self.last = slot;
    }

    /// Bytes the added pairs take.
    #[cfg(test)]
    pub(super) fn added_bytes(&self) -> usize {
        self.added.len()
    }

    fn added(&self) -> Added<'_> {
        Added {
            r: Reader::new(&self.added),
            slot: 0,
        }
    }
}

/// The `(slot, tf)` pairs of [`Posting::added`], decoded as they are read.
struct Added<'a> {
    r: Reader<'a>,
    slot: u32,
}

impl Iterator for Added<'_> {
    type Item = (u32, u32);
    fn next(&mut self) -> Option<(u32, u32)> {
        let gap = u32::try_from(self.r.varint()?).ok()?;
        let tf = u32::try_from(self.r.varint()?).ok()?;
        self.slot = self.slot.wrapping_add(gap);
        Some((self.slot, tf))
    }
}

/// Per slot added since the load, the ids of its terms (removal lowers
/// their document frequencies, [`Index::chunk_terms`] reads them back).
///
/// Each slot's ids are sorted and held as varint gaps, as the snapshot's
/// forward table holds them: in a cold build this is every (chunk, term)
/// pair of the workspace, and as `u32`s in a doubling vector it was the
/// largest structure of the build's peak heap after the postings (34 MB
/// on a 6k-file tree); gaps take about half.
#[derive(Debug, Clone)]
pub(super) struct SlotTerms {
    /// Per slot: start of its ids in `ids` (one extra at the end).
    start: Vec<usize>,
    ids: Vec<u8>,
    /// Reused while a slot's ids are sorted.
    scratch: Vec<u32>,
}

impl Default for SlotTerms {
    fn default() -> Self {
        SlotTerms {
            start: vec![0],
            ids: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl SlotTerms {
    /// Add the next slot with the term ids `ids` (any order, each once).
    pub(super) fn push(&mut self, ids: impl IntoIterator<Item = u32>) {
        self.scratch.clear();
        self.scratch.extend(ids);
        self.scratch.sort_unstable();
        let mut prev = 0;
        for &id in &self.scratch {
            push_varint(&mut self.ids, u64::from(id - prev));
            prev = id;
        }
        self.start.push(self.ids.len());
    }

    /// The ids of the `i`th slot, ascending.
    fn get(&self, i: usize) -> Vec<u32> {
        let (Some(&a), Some(&b)) = (self.start.get(i), self.start.get(i + 1)) else {
            return Vec::new();
        };
        let mut r = Reader::new(self.ids.get(a..b).unwrap_or(&[]));
        let mut id = 0u32;
        std::iter::from_fn(|| {
            id = id.wrapping_add(u32::try_from(r.varint()?).ok()?);
            Some(id)
        })
        .collect()
    }
}

/// The postings of one term: the saved part, then the part added since.
pub(super) struct Postings<'a> {
    saved: Option<PostingList<'a>>,
    added: Option<Added<'a>>,
}

impl Iterator for Postings<'_> {
    type Item = (u32, u32);
    fn next(&mut self) -> Option<(u32, u32)> {
        if let Some(saved) = self.saved.as_mut() {
            if let Some(p) = saved.next() {
                return Some(p);
            }
            self.saved = None;
        }
        self.added.as_mut()?.next()
    }
}

impl Index {
    /// A live slot's own-text term frequencies, sorted by term.
    pub fn chunk_terms(&self, slot: u32) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = self
            .slot_term_ids(slot)
            .into_iter()
            .filter_map(|id| {
                let tf = self.tf_of(id, slot)?;
                Some((self.dict.term(id)?.to_owned(), tf))
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The ids of a slot's terms.
    pub(super) fn slot_term_ids(&self, slot: u32) -> Vec<u32> {
        if slot < self.frozen_slots {
            return self
                .frozen
                .as_ref()
                .map(|f| f.forward(slot).collect())
                .unwrap_or_default();
        }
        self.slot_terms.get((slot - self.frozen_slots) as usize)
    }

    fn tf_of(&self, id: u32, slot: u32) -> Option<u32> {
        self.postings_of(id).find(|p| p.0 == slot).map(|p| p.1)
    }

    /// The saved postings of a frozen term id.
    fn saved_postings(&self, id: u32) -> Option<PostingList<'_>> {
        let frozen = self.frozen.as_ref()?;
        let (_, payload) = frozen.entry(&frozen.terms, id as usize)?;
        Some(PostingList::new(payload))
    }

    /// All postings of a term id (dead slots included).
    pub(super) fn postings_of(&self, id: u32) -> Postings<'_> {
        let frozen_len = self.dict.frozen_len() as u32;
        let changed = if id < frozen_len {
            self.changed_postings.get(&id)
        } else {
            self.tail_postings.get((id - frozen_len) as usize)
        };
        Postings {
            saved: (id < frozen_len).then(|| self.saved_postings(id)).flatten(),
            added: changed.map(Posting::added),
        }
    }

    /// The document frequency of a term id.
    pub(super) fn df_of(&self, id: u32) -> u32 {
        let frozen_len = self.dict.frozen_len() as u32;
        if id >= frozen_len {
            return self
                .tail_postings
                .get((id - frozen_len) as usize)
                .map_or(0, |p| p.df);
        }
        match self.changed_postings.get(&id) {
            Some(p) => p.df,
            None => self
                .saved_postings(id)
                .map_or(0, |p| u32::try_from(p.declared()).unwrap_or(u32::MAX)),
        }
    }

    /// The changeable part of a term's postings, created on first change
    /// (for a saved term, with its saved document frequency).
    pub(super) fn posting_mut(&mut self, id: u32) -> Option<&mut Posting> {
        let frozen_len = self.dict.frozen_len() as u32;
        if id >= frozen_len {
            return self.tail_postings.get_mut((id - frozen_len) as usize);
        }
        if !self.changed_postings.contains_key(&id) {
            let df = self.df_of(id);
            self.changed_postings.insert(id, Posting::with_df(df));
        }
        self.changed_postings.get_mut(&id)
    }

    /// Number of live chunks containing `term`.
    pub fn df(&self, term: &str) -> u32 {
        self.dict.get(term).map_or(0, |id| self.df_of(id))
    }

    /// Live postings of `term`: `(slot, tf, doc_len)`.
    pub fn postings(&self, term: &str) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.dict
            .get(term)
            .map(|id| self.postings_of(id))
            .into_iter()
            .flatten()
            .filter_map(move |(s, tf)| {
                let len = *self.doc_lens.get(s as usize)?;
                (len != DEAD).then_some((s, tf, len))
            })
    }
}

/// The saved slots of a table entry (defs, mentions, importers).
pub(super) fn saved_slots(payload: Option<&[u8]>) -> SlotList<'_> {
    SlotList::new(payload.unwrap_or(&[]))
}
