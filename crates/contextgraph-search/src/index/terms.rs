//! The term dictionary: terms interned to dense ids, a frozen sorted part
//! read in place from the snapshot plus a small tail for terms seen after
//! the load.

use std::hash::BuildHasher;
use std::sync::Arc;

use super::frozen::Frozen;

/// Terms interned to dense ids.
///
/// Ids `0..frozen_len` are the frozen, sorted terms (looked up by binary
/// search in the snapshot's terms table); later ids are the tail's.
///
/// The tail holds each term's bytes once, back to back in one string, and
/// a hash table of ids that compares through them: a cold build interns
/// every term of the workspace, and a map from a boxed string beside a
/// vector of boxed strings held each term twice in two allocations (about
/// 100 bytes a term, 40 MB on a 6k-file tree, instead of about 20).
#[derive(Debug, Default, Clone)]
pub struct TermDict {
    frozen: Option<Arc<Frozen>>,
    /// The tail's terms, back to back, in id order.
    tail_bytes: String,
    /// Per tail term, where it ends in `tail_bytes` (it starts where the
    /// one before ends).
    tail_ends: Vec<usize>,
    /// Tail ids (id − frozen length), hashed by their term.
    tail_ids: hashbrown::HashTable<u32>,
    /// foldhash: seeded per process (not predictable from file contents),
    /// much faster than SipHash on the short term strings of a cold build.
    hasher: foldhash::fast::RandomState,
}

/// Where the `i`th term of a tail lies in its bytes.
fn tail_range(ends: &[usize], i: usize) -> Option<std::ops::Range<usize>> {
    let end = *ends.get(i)?;
    let start = match i.checked_sub(1) {
        Some(before) => *ends.get(before)?,
        None => 0,
    };
    Some(start..end)
}

/// The `i`th term of a tail.
fn tail_term<'a>(bytes: &'a str, ends: &[usize], i: usize) -> Option<&'a str> {
    bytes.get(tail_range(ends, i)?)
}

/// [`tail_term`] as bytes (no character-boundary checks: terms are
/// compared and hashed as bytes).
fn tail_term_bytes<'a>(bytes: &'a [u8], ends: &[usize], i: usize) -> Option<&'a [u8]> {
    bytes.get(tail_range(ends, i)?)
}

impl TermDict {
    /// A dictionary of the snapshot's terms.
    pub(super) fn frozen_from(frozen: Arc<Frozen>) -> TermDict {
        TermDict {
            frozen: Some(frozen),
            ..TermDict::default()
        }
    }

    pub(super) fn frozen_len(&self) -> usize {
        self.frozen.as_ref().map_or(0, |f| f.terms.len())
    }

    fn frozen(&self, i: usize) -> Option<&str> {
        let f = self.frozen.as_ref()?;
        let (key, _) = f.entry(&f.terms, i)?;
        std::str::from_utf8(key).ok()
    }

    /// The id of `term`, if known.
    pub fn get(&self, term: &str) -> Option<u32> {
        self.get_bytes(term.as_bytes())
    }

    /// [`TermDict::get`] for a term as bytes.
    fn get_bytes(&self, term: &[u8]) -> Option<u32> {
        let saved = self.frozen.as_ref().and_then(|f| f.find(&f.terms, term));
        match saved {
            Some(i) => Some(i as u32),
            None => self.tail_get(term).map(|i| i + self.frozen_len() as u32),
        }
    }

    /// The tail index of `term`, if it is in the tail.
    fn tail_get(&self, term: &[u8]) -> Option<u32> {
        let hash = self.hasher.hash_one(term);
        let (bytes, ends) = (self.tail_bytes.as_bytes(), &self.tail_ends);
        self.tail_ids
            .find(hash, |&i| {
                tail_term_bytes(bytes, ends, i as usize) == Some(term)
            })
            .copied()
    }

    /// The term of an id.
    pub fn term(&self, id: u32) -> Option<&str> {
        let i = id as usize;
        if i < self.frozen_len() {
            self.frozen(i)
        } else {
            tail_term(&self.tail_bytes, &self.tail_ends, i - self.frozen_len())
        }
    }

    /// Number of distinct terms.
    pub fn len(&self) -> usize {
        self.frozen_len() + self.tail_ends.len()
    }

    /// Whether no term is known.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cfg(test)]
    pub(super) fn intern(&mut self, term: &str) -> (u32, bool) {
        self.intern_bytes(term.as_bytes())
            .unwrap_or((u32::MAX, false))
    }

    /// The id of `term` and whether it is new; terms come as bytes from
    /// [`TermCounts::iter_bytes`](crate::tokenize::TermCounts::iter_bytes)
    /// (a cold build interns every term of every chunk: only the new ones
    /// have their UTF-8 checked). `None` for bytes that are not UTF-8.
    pub(super) fn intern_bytes(&mut self, term: &[u8]) -> Option<(u32, bool)> {
        if let Some(id) = self.get_bytes(term) {
            return Some((id, false));
        }
        let term = std::str::from_utf8(term).ok()?;
        let id = self.len() as u32;
        let tail = self.tail_ends.len() as u32;
        self.tail_bytes.push_str(term);
        self.tail_ends.push(self.tail_bytes.len());
        let (bytes, ends, hasher) = (self.tail_bytes.as_bytes(), &self.tail_ends, &self.hasher);
        self.tail_ids
            .insert_unique(hasher.hash_one(term.as_bytes()), tail, |&i| {
                hasher.hash_one(tail_term_bytes(bytes, ends, i as usize).unwrap_or_default())
            });
        Some((id, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interned terms get dense ids in first-seen order, read back by id
    /// and by term, across the table's growth, each held once.
    #[test]
    fn tail_terms_are_dense_held_once_and_read_back_both_ways() {
        let mut dict = TermDict::default();
        let terms: Vec<String> = (0..5000).map(|i| format!("t{i}")).collect();
        for (i, t) in terms.iter().enumerate() {
            assert_eq!(dict.intern(t), (i as u32, true));
        }
        assert_eq!(dict.intern("t42"), (42, false));
        assert_eq!(dict.intern(""), (5000, true));
        assert_eq!(dict.len(), 5001);
        for (i, t) in terms.iter().enumerate() {
            assert_eq!(dict.get(t), Some(i as u32));
            assert_eq!(dict.term(i as u32), Some(t.as_str()));
        }
        assert_eq!(dict.term(5000), Some(""));
        assert_eq!((dict.get("nope"), dict.term(5001)), (None, None));
        let bytes: usize = terms.iter().map(String::len).sum();
        assert_eq!(dict.tail_bytes.len(), bytes);
    }
}
