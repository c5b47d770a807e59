//! The term dictionary: terms interned to dense ids, a frozen sorted part
//! exactly as loaded plus a small tail for terms seen after the load.

/// Terms interned to dense ids.
///
/// Ids `0..frozen_len` are the frozen, sorted terms (looked up by binary
/// search in one blob); later ids come from the tail map.
#[derive(Debug, Default, Clone)]
pub struct TermDict {
    blob: String,
    /// `frozen_len + 1` offsets into `blob`.
    offsets: Vec<u32>,
    /// foldhash: seeded per process (not predictable from file contents),
    /// much faster than SipHash on the short term strings of a cold build.
    tail: foldhash::HashMap<Box<str>, u32>,
    tail_terms: Vec<Box<str>>,
}

impl TermDict {
    /// A dictionary of only frozen terms: `blob` holds them sorted and
    /// concatenated, `offsets` their `len + 1` boundaries (as a snapshot
    /// stores them, so a load allocates nothing per term).
    pub(super) fn frozen_from(blob: String, offsets: Vec<u32>) -> TermDict {
        TermDict {
            blob,
            offsets,
            ..TermDict::default()
        }
    }

    fn frozen_len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    fn frozen(&self, i: usize) -> &str {
        &self.blob[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The id of `term`, if known.
    pub fn get(&self, term: &str) -> Option<u32> {
        let (mut lo, mut hi) = (0usize, self.frozen_len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.frozen(mid).cmp(term) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        self.tail.get(term).copied()
    }

    /// The term of an id.
    pub fn term(&self, id: u32) -> Option<&str> {
        let i = id as usize;
        if i < self.frozen_len() {
            Some(self.frozen(i))
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
