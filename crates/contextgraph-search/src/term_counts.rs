//! One chunk's own-text term frequencies in two allocations.
//!
//! A cold build holds the terms of every chunk of the workspace between
//! chunking (on all cores) and indexing (on one): as a `Vec<(String, u32)>`
//! that was one heap string per distinct term per chunk, which made the
//! term lists most of the build's peak memory and their allocation a good
//! part of its CPU. Here they sit in one packed byte vector, sorted.
//! Counting a chunk's tokens into one is here too
//! (`term_frequencies_of`).

use crate::tokenize::{for_each_token, Token};

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

    /// Empty it, keeping its buffer.
    fn clear(&mut self) {
        self.packed.clear();
        self.terms = 0;
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

/// Term frequencies of the concatenation of `parts`, each of which must end
/// at a word boundary (as the lines of a chunk's own text do), and the total
/// token count.
///
/// Counted by sorting, not hashing: each token occurrence becomes one
/// `u128` ([`occurrence`]) whose order is the terms' order for all but
/// terms sharing their first eight bytes, which are put in order after
/// (most terms are shorter). A sort of integers compares in a few
/// instructions, where a hash map of string keys hashed every token and
/// the sort of its distinct terms compared strings byte by byte (together
/// two thirds of this function's cost on a cold build, issue 29). The
/// lowercased text, the occurrences and the packed result live in buffers
/// reused by the thread: a chunk costs one allocation, its result's.
pub(crate) fn term_frequencies_of(parts: &[&str]) -> (TermCounts, u32) {
    term_frequencies_of_parts(parts, &[])
}

/// [`term_frequencies_of`] over `parts` followed by `names`, given apart so
/// that a caller can keep `parts` (slices of a file's text) in one buffer
/// for all of the file's chunks while `names` borrow each chunk in turn
/// (`build_chunk_records_in`: a vector per chunk otherwise).
pub(crate) fn term_frequencies_of_parts(parts: &[&str], names: &[&str]) -> (TermCounts, u32) {
    thread_local! {
        static SCRATCH: std::cell::RefCell<CountScratch> =
            std::cell::RefCell::new(CountScratch::default());
    }
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => {
            let counted = scratch.count(parts, names);
            scratch.trim();
            counted
        }
        // Not reentrant in practice; a fresh buffer keeps it correct.
        Err(_) => CountScratch::default().count(parts, names),
    })
}

/// Buffers [`term_frequencies_of`] reuses from chunk to chunk.
#[derive(Default)]
struct CountScratch {
    /// The parts, ASCII-lowercased and concatenated; then [`KEY_BYTES`]
    /// zeros (so that a key can be read at any token); then the tokens
    /// lowercased with Unicode rules (each followed by zeros too).
    bytes: Vec<u8>,
    /// One [`occurrence`] per token.
    occurrences: Vec<u128>,
    /// The result, built here and copied out at its exact size.
    out: TermCounts,
}

/// Bytes of [`CountScratch`] buffer kept for the next chunk at most.
const SCRATCH_KEPT: usize = 1 << 20;

/// Bytes of a term in the high half of its [`occurrence`].
const KEY_BYTES: usize = 8;
/// Bits of an occurrence's start in [`CountScratch::bytes`].
const START_BITS: u32 = 40;

/// A token occurrence as one sortable integer: the term's first
/// [`KEY_BYTES`] bytes, big-endian and zero-padded (high 64 bits), its
/// length (24 bits) and its start in [`CountScratch::bytes`] (40 bits).
///
/// A term never holds a zero byte (it is made of lowercased alphanumeric
/// characters and `_`), so the high halves compare as the terms' first
/// bytes do, a shorter term before the longer ones it begins. Equal high
/// halves mean equal terms when the terms are shorter than [`KEY_BYTES`]
/// (the zero padding then says their length), the same first eight bytes
/// otherwise: then the length orders an eight-byte term first, and longer
/// ones need their bytes compared ([`CountScratch::order_long_terms`]).
fn occurrence(bytes: &[u8], start: usize, len: usize) -> u128 {
    let word = bytes
        .get(start..start + KEY_BYTES)
        .and_then(|w| <[u8; KEY_BYTES]>::try_from(w).ok())
        .map_or(0, u64::from_be_bytes);
    // Keep the term's bytes, zero what follows it.
    let key = if len >= KEY_BYTES {
        word
    } else {
        word & !(u64::MAX.checked_shr(8 * len as u32).unwrap_or(0))
    };
    // Terms are at most a few hundred bytes and chunks far below a
    // terabyte: the fields do not overlap.
    let low = ((len as u64) << START_BITS) | (start as u64 & ((1 << START_BITS) - 1));
    (u128::from(key) << 64) | u128::from(low)
}

/// The high half of an occurrence.
fn key_of(o: u128) -> u64 {
    (o >> 64) as u64
}

/// The term length of an occurrence.
fn len_of(o: u128) -> usize {
    ((o as u64) >> START_BITS) as usize
}

/// The bytes of an occurrence's term.
fn term_of(bytes: &[u8], o: u128) -> &[u8] {
    let start = (o as u64 & ((1 << START_BITS) - 1)) as usize;
    bytes.get(start..start + len_of(o)).unwrap_or_default()
}

impl CountScratch {
    fn count(&mut self, parts: &[&str], names: &[&str]) -> (TermCounts, u32) {
        let CountScratch {
            bytes,
            occurrences,
            out,
        } = self;
        bytes.clear();
        occurrences.clear();
        let parts = || parts.iter().chain(names);
        let len: usize = parts().map(|p| p.len()).sum();
        bytes.reserve(len + KEY_BYTES);
        for part in parts() {
            bytes.extend_from_slice(part.as_bytes());
        }
        bytes.make_ascii_lowercase();
        bytes.resize(len + KEY_BYTES, 0);
        let mut total = 0u32;
        let mut base = 0usize;
        for part in parts() {
            for_each_token(part, |t| {
                total = total.saturating_add(1);
                let (start, len) = match t {
                    Token::At(r) => (base + r.start, r.len()),
                    Token::Lowered(s) => {
                        let start = bytes.len();
                        bytes.extend_from_slice(s.as_bytes());
                        bytes.resize(bytes.len() + KEY_BYTES, 0);
                        (start, s.len())
                    }
                };
                occurrences.push(occurrence(bytes, start, len));
            });
            base += part.len();
        }
        let bytes = &*bytes;
        occurrences.sort_unstable();
        Self::order_long_terms(bytes, occurrences);
        // Equal terms are adjacent now.
        out.clear();
        let mut i = 0usize;
        while let Some(&first) = occurrences.get(i) {
            let term = term_of(bytes, first);
            let mut count = 1u32;
            i += 1;
            while let Some(&next) = occurrences.get(i) {
                let same = key_of(next) == key_of(first)
                    && len_of(next) == len_of(first)
                    && (len_of(first) <= KEY_BYTES || term_of(bytes, next) == term);
                if !same {
                    break;
                }
                count = count.saturating_add(1);
                i += 1;
            }
            // Token boundaries of UTF-8 text, lowercased: UTF-8.
            out.push_sorted_bytes(term, count);
        }
        (out.clone(), total)
    }

    /// Drops buffers a huge chunk grew: they are not kept for the thread's
    /// lifetime.
    fn trim(&mut self) {
        if self.bytes.capacity() > SCRATCH_KEPT {
            self.bytes = Vec::new();
        }
        if self.occurrences.capacity() * 16 > SCRATCH_KEPT {
            self.occurrences = Vec::new();
        }
        if self.out.packed.capacity() > SCRATCH_KEPT {
            self.out = TermCounts::default();
        }
    }

    /// Puts in term order the occurrences the integer sort left out of it:
    /// runs sharing their first eight bytes with terms longer than that
    /// (see [`occurrence`]), whose longer terms are sorted by their bytes.
    fn order_long_terms(bytes: &[u8], occurrences: &mut [u128]) {
        let mut i = 0usize;
        while i < occurrences.len() {
            let key = key_of(occurrences[i]);
            let mut end = i + 1;
            while end < occurrences.len() && key_of(occurrences[end]) == key {
                end += 1;
            }
            // Sorted by length within the run: the long terms are last.
            let run = &mut occurrences[i..end];
            let long = run.partition_point(|&o| len_of(o) <= KEY_BYTES);
            if run.len() - long > 1 {
                run[long..].sort_unstable_by(|&a, &b| term_of(bytes, a).cmp(term_of(bytes, b)));
            }
            i = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk larger than the buffers kept counts right, and so does the
    /// chunk after it (the buffers dropped in between).
    #[test]
    fn a_huge_chunk_and_the_next_count_right() {
        let huge = "alpha Beta ".repeat(100_000);
        let (terms, total) = term_frequencies_of(&[&huge]);
        let expected = [("alpha".to_owned(), 100_000), ("beta".to_owned(), 100_000)];
        assert_eq!((terms.to_vec(), total), (expected.to_vec(), 200_000));
        let (terms, total) = term_frequencies_of(&["gamma delta gamma"]);
        let expected = [("delta".to_owned(), 1), ("gamma".to_owned(), 2)];
        assert_eq!((terms.to_vec(), total), (expected.to_vec(), 3));
    }

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
