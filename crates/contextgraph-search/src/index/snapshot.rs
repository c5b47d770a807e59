//! The index's persisted form (format v3 payload): records, then the
//! sorted dictionary and delta-encoded postings, decoded on two threads.

use std::sync::Arc;

use super::postings::{Posting, DEAD};
use super::terms::TermDict;
use super::{FileEntry, Index, SlotRef};
use crate::codec::{Reader, Writer};

impl Index {
    /// Encode the live index (format v3 payload): the byte length of the
    /// records section (so a load decodes records and postings in parallel,
    /// see [`decode`](Self::decode)); file records without terms, in slot
    /// order (so live slots renumber densely and monotonically); the sorted
    /// term dictionary; then per term its postings as delta-encoded slot
    /// varints and tf varints.
    pub(crate) fn encode(&self, w: &mut Writer) {
        let mut order: Vec<&FileEntry> = self.files.iter().flatten().collect();
        order.sort_by_key(|e| e.first_slot);
        let mut remap: Vec<u32> = vec![DEAD; self.slots.len()];
        let mut next = 0u32;
        let length_at = w.buf.len();
        w.u64(0); // patched below
        let records_start = w.buf.len();
        w.len(order.len());
        for e in &order {
            crate::codec::write_file(w, &e.record, false);
            for i in 0..e.record.chunks.len() as u32 {
                if let Some(m) = remap.get_mut((e.first_slot + i) as usize) {
                    *m = next;
                }
                next += 1;
            }
        }
        let records_len = (w.buf.len() - records_start) as u64;
        w.buf[length_at..records_start].copy_from_slice(&records_len.to_le_bytes());
        let mut terms: Vec<(&str, u32)> = (0..self.dict.len() as u32)
            .filter(|&id| self.postings.get(id as usize).is_some_and(|p| p.df > 0))
            .filter_map(|id| Some((self.dict.term(id)?, id)))
            .collect();
        terms.sort_unstable();
        w.varint(terms.len() as u64);
        for (t, _) in &terms {
            w.varint(t.len() as u64);
            w.raw(t.as_bytes());
        }
        let mut live: Vec<(u32, u32)> = Vec::new();
        for (_, id) in &terms {
            let p = &self.postings[*id as usize];
            live.clear();
            let frozen = &self.arena[p.frozen.0 as usize..p.frozen.1 as usize];
            live.extend(
                frozen
                    .iter()
                    .chain(&p.extra)
                    .filter(|(s, _)| self.is_live(*s))
                    .map(|&(s, tf)| (remap[s as usize], tf)),
            );
            w.varint(live.len() as u64);
            let mut prev = 0u32;
            for (i, &(s, tf)) in live.iter().enumerate() {
                // First entry absolute, then gaps (strictly positive).
                w.varint(u64::from(if i == 0 { s } else { s - prev }));
                w.varint(u64::from(tf));
                prev = s;
            }
        }
    }

    /// Decode a v3 payload written by [`encode`](Self::encode). `None` on
    /// any inconsistency (out-of-range slot, unsorted dictionary, bad UTF-8,
    /// trailing bytes): the caller treats the index as untrusted.
    ///
    /// The records section and the dictionary + postings section are
    /// independent byte ranges, decoded on two threads: a load takes about
    /// the longer of the two, not their sum. Slot bounds, which need the
    /// records, are checked once both are done.
    pub(crate) fn decode(r: &mut Reader<'_>) -> Option<Index> {
        let records_len = usize::try_from(r.u64()?).ok()?;
        let records = r.take(records_len)?;
        let terms = r.rest();
        let (index, terms) = std::thread::scope(|scope| {
            let worker = std::thread::Builder::new()
                .name("cgp-index-decode".into())
                .spawn_scoped(scope, || decode_terms(terms));
            let index = decode_records(records);
            let terms = match worker {
                Ok(handle) => handle.join().ok().flatten(),
                // No thread to be had: decode here instead.
                Err(_) => decode_terms(terms),
            };
            (index, terms)
        });
        let mut index = index?;
        let terms = terms?;
        if terms
            .max_slot
            .is_some_and(|m| m as usize >= index.slots.len())
        {
            return None; // a posting names a slot no record has
        }
        index.dict = terms.dict;
        index.postings = terms.postings;
        index.arena = terms.arena;
        Some(index)
    }
}

/// The dictionary + postings section, decoded.
struct DecodedTerms {
    dict: TermDict,
    postings: Vec<Posting>,
    arena: Vec<(u32, u32)>,
    /// Highest slot any posting names (checked against the records).
    max_slot: Option<u32>,
}

/// The records section: files, slots, lengths and the symbol table.
fn decode_records(bytes: &[u8]) -> Option<Index> {
    let r = &mut Reader::new(bytes);
    let mut index = Index::default();
    let n_files = r.len_prefix()?;
    index.files.reserve(n_files);
    for file_no in 0..n_files {
        let record = crate::codec::read_file(r, false)?;
        let first_slot = index.slots.len() as u32;
        for (ordinal, c) in record.chunks.iter().enumerate() {
            let slot = first_slot + ordinal as u32;
            index.slots.push(SlotRef {
                file: file_no as u32,
                ordinal: ordinal as u32,
            });
            let len = c.doc_len.min(DEAD - 1);
            index.doc_lens.push(len);
            index.total_len += u64::from(len);
            index.link_defs(slot, c);
        }
        let path: Arc<str> = Arc::from(record.rel_path.as_str());
        if index.by_path.insert(path, file_no as u32).is_some() {
            return None; // the same path twice
        }
        index.files.push(Some(FileEntry { record, first_slot }));
    }
    index.live = u32::try_from(index.slots.len()).ok()?;
    r.is_empty().then_some(index)
}

/// The dictionary + postings section; must be consumed exactly.
fn decode_terms(bytes: &[u8]) -> Option<DecodedTerms> {
    let r = &mut Reader::new(bytes);
    let n_terms = r.varint_len()?;
    let mut blob = String::new();
    let mut offsets: Vec<u32> = Vec::with_capacity(n_terms + 1);
    offsets.push(0);
    for i in 0..n_terms {
        let len = r.varint_len()?;
        let term = std::str::from_utf8(r.take(len)?).ok()?;
        if i > 0 {
            let prev = &blob[offsets[i - 1] as usize..];
            if prev >= term {
                return None; // not strictly sorted
            }
        }
        blob.push_str(term);
        offsets.push(u32::try_from(blob.len()).ok()?);
    }
    let dict = TermDict::frozen_from(blob, offsets);
    let mut postings = Vec::with_capacity(n_terms);
    // Every posting takes at least two bytes: an upper bound, so the arena
    // is allocated once instead of regrown (and copied) as it fills.
    let mut arena: Vec<(u32, u32)> = Vec::with_capacity(r.remaining() / 2);
    let mut max_slot: Option<u32> = None;
    for _ in 0..n_terms {
        let count = r.varint_len()?;
        let start = u32::try_from(arena.len()).ok()?;
        let mut prev = 0u32;
        for i in 0..count {
            let gap = u32::try_from(r.varint()?).ok()?;
            if i > 0 && gap == 0 {
                return None; // not strictly increasing
            }
            let slot = if i == 0 { gap } else { prev.checked_add(gap)? };
            let tf = u32::try_from(r.varint()?).ok()?;
            if slot == DEAD || tf == 0 {
                return None;
            }
            arena.push((slot, tf));
            prev = slot;
        }
        if count > 0 {
            max_slot = max_slot.max(Some(prev));
        }
        let end = u32::try_from(arena.len()).ok()?;
        postings.push(Posting {
            df: u32::try_from(count).ok()?,
            frozen: (start, end),
            extra: Vec::new(),
        });
    }
    arena.shrink_to_fit();
    r.is_empty().then_some(DecodedTerms {
        dict,
        postings,
        arena,
        max_slot,
    })
}
