//! The term dictionary: terms interned to dense ids, a frozen sorted part
//! read in place from the snapshot plus a small tail for terms seen after
//! the load.

use std::sync::Arc;

use super::frozen::Frozen;

/// Terms interned to dense ids.
///
/// Ids `0..frozen_len` are the frozen, sorted terms (looked up by binary
/// search in the snapshot's terms table); later ids come from the tail map.
#[derive(Debug, Default, Clone)]
pub struct TermDict {
    frozen: Option<Arc<Frozen>>,
    /// foldhash: seeded per process (not predictable from file contents),
    /// much faster than SipHash on the short term strings of a cold build.
    tail: foldhash::HashMap<Box<str>, u32>,
    tail_terms: Vec<Box<str>>,
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
        let saved = self
            .frozen
            .as_ref()
            .and_then(|f| f.find(&f.terms, term.as_bytes()));
        match saved {
            Some(i) => Some(i as u32),
            None => self.tail.get(term).copied(),
        }
    }

    /// The term of an id.
    pub fn term(&self, id: u32) -> Option<&str> {
        let i = id as usize;
        if i < self.frozen_len() {
            self.frozen(i)
        } else {
            self.tail_terms.get(i - self.frozen_len()).map(|t| &**t)
        }
    }

    /// Number of distinct terms.
    pub fn len(&self) -> usize {
        self.frozen_len() + self.tail_terms.len()
    }

    /// Whether no term is known.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn intern(&mut self, term: &str) -> (u32, bool) {
        if let Some(id) = self.get(term) {
            return (id, false);
        }
        let id = self.len() as u32;
        self.tail.insert(Box::from(term), id);
        self.tail_terms.push(Box::from(term));
        (id, true)
    }
}
