//! Incremental updates: upsert and remove tombstone slots and adjust
//! frequencies in place; compaction rebuilds densely.

use std::sync::Arc;

use super::postings::{Posting, DEAD};
use super::{FileEntry, FileRecord, Index, SlotRef};
use crate::codec::{Reader, Writer};

impl Index {
    /// Insert or replace a file's record. The chunks' `terms` go into the
    /// postings (and are cleared in the stored record).
    pub fn upsert(&mut self, mut record: FileRecord) {
        self.remove(&record.rel_path);
        let file_no = self.files.len() as u32;
        let first_slot = self.slots.len() as u32;
        for (ordinal, c) in record.chunks.iter_mut().enumerate() {
            let slot = first_slot + ordinal as u32;
            self.slots.push(SlotRef {
                file: file_no,
                ordinal: ordinal as u32,
            });
            // DEAD is reserved: a (absurd) u32::MAX-token chunk is clamped.
            let len = c.doc_len.min(DEAD - 1);
            self.doc_lens.push(len);
            self.live += 1;
            self.total_len += u64::from(len);
            for (term, tf) in std::mem::take(&mut c.terms).iter() {
                let (id, new) = self.dict.intern(term);
                if new {
                    self.postings.push(Posting::default());
                }
                let p = &mut self.postings[id as usize];
                p.df += 1;
                p.extra.push((slot, tf));
                if let Some(st) = self.slot_terms.get_mut() {
                    st.ids.push(id);
                }
            }
            if let Some(st) = self.slot_terms.get_mut() {
                st.start.push(st.ids.len());
            }
            self.link_defs(slot, c);
            if let Some(edges) = self.edges.get_mut() {
                edges.link(slot, c);
            }
        }
        let path: Arc<str> = Arc::from(record.rel_path.as_str());
        self.files.push(Some(FileEntry { record, first_slot }));
        self.by_path.insert(path, file_no);
    }

    /// Remove a file; returns its record when it was known.
    pub fn remove(&mut self, rel_path: &str) -> Option<FileRecord> {
        if !self.by_path.contains_key(rel_path) {
            return None;
        }
        // The document frequencies below need the slot → terms inversion.
        self.slot_terms();
        let file_no = self.by_path.remove(rel_path)?;
        let entry = self.files.get_mut(file_no as usize)?.take()?;
        for ordinal in 0..entry.record.chunks.len() {
            let slot = entry.first_slot + ordinal as u32;
            if let Some(len) = self.doc_lens.get_mut(slot as usize) {
                if *len != DEAD {
                    self.live = self.live.saturating_sub(1);
                    self.total_len = self.total_len.saturating_sub(u64::from(*len));
                }
                *len = DEAD;
            }
            if let Some((a, b)) = self.slot_term_range(slot) {
                let ids = self.slot_terms.get().map_or(&[][..], |st| &st.ids[a..b]);
                for &id in ids {
                    if let Some(p) = self.postings.get_mut(id as usize) {
                        p.df = p.df.saturating_sub(1);
                    }
                }
            }
            // Postings, defs, mentions and importers keep the dead slot until
            // compaction; readers skip dead slots, which keeps removal
            // O(the file's terms), not O(posting lists).
        }
        Some(entry.record)
    }

    /// Rebuild densely when over half the slots are dead, so postings of
    /// deleted chunks stop costing query time and memory.
    pub fn compact_if_sparse(&mut self) {
        let dead = self.slots.len() as u64 - u64::from(self.live);
        if dead > 1024 && dead > u64::from(self.live) {
            self.compact();
        }
    }

    /// Rebuild densely (live slots only, every term frozen and sorted):
    /// exactly what a snapshot round trip produces.
    pub fn compact(&mut self) {
        let mut w = Writer::default();
        self.encode(&mut w);
        if let Some(fresh) = Index::decode(&mut Reader::new(&w.buf)) {
            *self = fresh;
        }
    }
}
