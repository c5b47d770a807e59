//! One chunk's own-text term frequencies in two allocations.
//!
//! A cold build holds the terms of every chunk of the workspace between
//! chunking (on all cores) and indexing (on one): as a `Vec<(String, u32)>`
//! that was one heap string per distinct term per chunk, which made the
//! term lists most of the build's peak memory and their allocation a good
//! part of its CPU. Here the terms sit concatenated in one string, sorted,
//! with their end offsets and counts beside them.

/// Term frequencies sorted by term (each term once).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TermCounts {
    /// The terms, concatenated in sorted order.
    blob: String,
    /// Per term: its end offset in `blob` and its count.
    entries: Vec<(u32, u32)>,
}

impl TermCounts {
    /// From `(term, count)` pairs in any order; a term given twice has its
    /// counts added.
    pub fn from_pairs<S: AsRef<str>>(pairs: impl IntoIterator<Item = (S, u32)>) -> TermCounts {
        let mut pairs: Vec<(S, u32)> = pairs.into_iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        let mut out = TermCounts {
            blob: String::with_capacity(pairs.iter().map(|p| p.0.as_ref().len()).sum()),
            entries: Vec::with_capacity(pairs.len()),
        };
        for (term, count) in pairs {
            let term = term.as_ref();
            if out.iter().next_back().is_some_and(|(last, _)| last == term) {
                if let Some(e) = out.entries.last_mut() {
                    e.1 = e.1.saturating_add(count);
                }
                continue;
            }
            out.push_sorted(term, count);
        }
        out
    }

    /// Append a term greater than every term so far (callers sort first).
    pub(crate) fn push_sorted(&mut self, term: &str, count: u32) {
        self.blob.push_str(term);
        // A chunk's own text is capped far below 4 GiB (the file size cap).
        let end = u32::try_from(self.blob.len()).unwrap_or(u32::MAX);
        self.entries.push((end, count));
    }

    /// An empty list with room for `terms` terms of `bytes` bytes in all.
    pub(crate) fn with_capacity(terms: usize, bytes: usize) -> TermCounts {
        TermCounts {
            blob: String::with_capacity(bytes),
            entries: Vec::with_capacity(terms),
        }
    }

    /// Number of distinct terms.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no term.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(term, count)` in term order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&str, u32)> + ExactSizeIterator + '_ {
        self.entries.iter().enumerate().map(move |(i, &(end, n))| {
            let start = match i {
                0 => 0,
                _ => self.entries[i - 1].0 as usize,
            };
            (self.blob.get(start..end as usize).unwrap_or(""), n)
        })
    }

    /// The count of `term` (0 when absent).
    pub fn get(&self, term: &str) -> u32 {
        let terms: Vec<(&str, u32)> = self.iter().collect();
        terms
            .binary_search_by(|(t, _)| (*t).cmp(term))
            .map_or(0, |i| terms[i].1)
    }

    /// As owned pairs (for tests and export).
    pub fn to_vec(&self) -> Vec<(String, u32)> {
        self.iter().map(|(t, n)| (t.to_owned(), n)).collect()
    }
}

impl<S: AsRef<str>> FromIterator<(S, u32)> for TermCounts {
    fn from_iter<I: IntoIterator<Item = (S, u32)>>(iter: I) -> Self {
        TermCounts::from_pairs(iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_sorted_merged_and_read_back() {
        let t = TermCounts::from_pairs([("beta", 2), ("alpha", 1), ("beta", 3), ("", 4)]);
        assert_eq!(
            t.to_vec(),
            [("".into(), 4), ("alpha".into(), 1), ("beta".into(), 5)]
        );
        assert_eq!(t.len(), 3);
        assert_eq!(t.get("beta"), 5);
        assert_eq!(t.get("gamma"), 0);
        assert_eq!(t, t.iter().collect::<TermCounts>());
        assert!(TermCounts::default().is_empty());
    }
}
