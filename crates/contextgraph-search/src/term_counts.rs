//! One chunk's own-text term frequencies in two allocations.
//!
//! A cold build holds the terms of every chunk of the workspace between
//! chunking (on all cores) and indexing (on one): as a `Vec<(String, u32)>`
//! that was one heap string per distinct term per chunk, which made the
//! term lists most of the build's peak memory and their allocation a good
//! part of its CPU. Here they sit in one packed byte vector, sorted.

/// Term frequencies sorted by term (each term once).
///
/// Packed in one byte vector: per term, its length (LEB128), its bytes and
/// its count (LEB128). Terms are at most a few dozen bytes and counts small,
/// so a term costs its bytes plus two: half of what offsets and counts as
/// `u32`s beside a string cost, on the structure that dominates a cold
/// build's memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TermCounts {
    packed: Vec<u8>,
    terms: u32,
}

fn push_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u32::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

impl TermCounts {
    /// From `(term, count)` pairs in any order; a term given twice has its
    /// counts added.
    pub fn from_pairs<S: AsRef<str>>(pairs: impl IntoIterator<Item = (S, u32)>) -> TermCounts {
        let mut pairs: Vec<(S, u32)> = pairs.into_iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        let mut merged: Vec<(&str, u32)> = Vec::with_capacity(pairs.len());
        for (term, count) in &pairs {
            match merged.last_mut() {
                Some(last) if last.0 == term.as_ref() => last.1 = last.1.saturating_add(*count),
                _ => merged.push((term.as_ref(), *count)),
            }
        }
        let bytes = merged.iter().map(|(t, _)| t.len() + 2).sum();
        let mut out = TermCounts::with_capacity(bytes);
        for (term, count) in merged {
            out.push_sorted(term, count);
        }
        out
    }

    /// Append a term greater than every term so far (callers sort first).
    pub(crate) fn push_sorted(&mut self, term: &str, count: u32) {
        self.push_sorted_bytes(term.as_bytes(), count);
    }

    /// [`TermCounts::push_sorted`] for a term held as bytes, which must be
    /// UTF-8 (readers would see an empty term otherwise); the counting of
    /// a chunk's terms (`tokenize.rs`) knows its terms are, without
    /// checking each again.
    pub(crate) fn push_sorted_bytes(&mut self, term: &[u8], count: u32) {
        // A term is a word of at most a few dozen bytes (longer runs are
        // not indexed); a longer one read from a damaged journal is cut to
        // what the length prefix can say rather than misread.
        let len = u32::try_from(term.len()).unwrap_or(u32::MAX);
        push_varint(&mut self.packed, len);
        self.packed.extend_from_slice(&term[..len as usize]);
        push_varint(&mut self.packed, count);
        self.terms += 1;
    }

    /// An empty list with room for about `bytes` packed bytes.
    pub(crate) fn with_capacity(bytes: usize) -> TermCounts {
        TermCounts {
            packed: Vec::with_capacity(bytes),
            terms: 0,
        }
    }

    /// Number of distinct terms.
    pub fn len(&self) -> usize {
        self.terms as usize
    }

    /// Whether there is no term.
    pub fn is_empty(&self) -> bool {
        self.terms == 0
    }

    /// `(term, count)` in term order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        // Only `push_sorted` writes, from UTF-8: never empty in practice.
        self.iter_bytes()
            .map(|(term, count)| (std::str::from_utf8(term).unwrap_or(""), count))
    }

    /// [`TermCounts::iter`] with the terms as bytes, unchecked: for the
    /// index, which interns every term of every chunk of a cold build and
    /// needs to check only the new ones.
    pub(crate) fn iter_bytes(&self) -> impl Iterator<Item = (&[u8], u32)> + '_ {
        let mut at = 0usize;
        std::iter::from_fn(move || {
            if at >= self.packed.len() {
                return None;
            }
            let len = read_varint(&self.packed, &mut at)? as usize;
            let term = self.packed.get(at..at + len)?;
            at += len;
            let count = read_varint(&self.packed, &mut at)?;
            Some((term, count))
        })
    }

    /// The count of `term` (0 when absent).
    pub fn get(&self, term: &str) -> u32 {
        self.iter().find(|(t, _)| *t == term).map_or(0, |(_, n)| n)
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
        // Long terms and large counts take multi-byte lengths and counts.
        let long = "x".repeat(300);
        let t = TermCounts::from_pairs([(long.as_str(), 70_000), ("y", u32::MAX)]);
        assert_eq!(t.to_vec(), [(long.clone(), 70_000), ("y".into(), u32::MAX)]);
    }
}
