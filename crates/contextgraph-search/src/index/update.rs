//! Incremental updates: upsert and remove tombstone slots and adjust
//! frequencies in place (beside the mapped snapshot, never in it);
//! compaction rebuilds densely.

use std::sync::{Arc, OnceLock};

use super::packed::PackedChunks;
use super::postings::{Posting, DEAD};
use super::{FileEntry, FileRecord, Index, SlotRef};

impl Index {
    /// Insert or replace a file's record. The chunks' `terms` go into the
    /// postings (and are cleared in the stored record).
    pub fn upsert(&mut self, mut record: FileRecord) {
        self.remove(&record.rel_path);
        let file_no = self.files.len() as u32;
        let first_slot = self.slots.len() as u32;
        let mut ids = Vec::new();
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
            for (term, tf) in std::mem::take(&mut c.terms).iter_bytes() {
                // Terms are UTF-8 (`TermCounts` is built from strings); one
                // that were not would read as "" (`TermCounts::iter`).
                let Some((id, new)) = self
                    .dict
                    .intern_bytes(term)
                    .or_else(|| self.dict.intern_bytes(b""))
                else {
                    continue;
                };
                if new {
                    self.tail_postings.push(Posting::default());
                }
                if let Some(p) = self.posting_mut(id) {
                    p.df += 1;
                    p.push(slot, tf);
                }
                ids.push(id);
            }
            self.slot_terms.push(ids.drain(..));
            self.link_defs(slot, c);
            self.edges.link(slot, c);
        }
        let path: Arc<str> = Arc::from(record.rel_path.as_str());
        let head = record.clone_head();
        let chunk_count = record.chunks.len() as u32;
        // Kept encoded, decoded when read: see `packed.rs`.
        let packed = PackedChunks::pack(&record.chunks);
        drop(record);
        self.files.push(Some(FileEntry {
            head,
            record: OnceLock::new(),
            packed: Some(packed),
            saved: None,
            saved_crc: 0,
            intact: OnceLock::new(),
            chunk_count,
            first_slot,
            traits: OnceLock::new(),
        }));
        self.by_path.insert(path, file_no);
    }

    /// A file's metadata changed but not its content (same hash): record
    /// the new size and modification time, keeping chunks and postings.
    /// Returns whether the file was known.
    pub fn touch(&mut self, rel_path: &str, size: u64, mtime_ns: Option<i128>) -> bool {
        let Some(&file_no) = self.by_path.get(rel_path) else {
            return false;
        };
        let Some(Some(entry)) = self.files.get_mut(file_no as usize) else {
            return false;
        };
        for record in std::iter::once(&mut entry.head).chain(entry.record.get_mut()) {
            record.size = size;
            record.mtime_ns = mtime_ns;
        }
        true
    }

    /// Remove a file; returns its record when it was known.
    pub fn remove(&mut self, rel_path: &str) -> Option<FileRecord> {
        let file_no = *self.by_path.get(rel_path)?;
        let entry = self.files.get(file_no as usize)?.as_ref()?;
        // Decoded before the entry goes (it may still be in the snapshot).
        self.record_of(entry);
        self.by_path.remove(rel_path);
        let entry = self.files.get_mut(file_no as usize)?.take()?;
        for ordinal in 0..entry.chunk_count {
            let slot = entry.first_slot + ordinal;
            if let Some(len) = self.doc_lens.get_mut(slot as usize) {
                if *len == DEAD {
                    continue;
                }
                self.live = self.live.saturating_sub(1);
                self.total_len = self.total_len.saturating_sub(u64::from(*len));
                *len = DEAD;
            }
            for id in self.slot_term_ids(slot) {
                if let Some(p) = self.posting_mut(id) {
                    p.df = p.df.saturating_sub(1);
                }
            }
            // Postings, defs, mentions and importers keep the dead slot until
            // compaction; readers skip dead slots, which keeps removal
            // O(the file's terms), not O(posting lists).
        }
        let record = entry.record.into_inner();
        // Its decoded chunks leave with it: no longer kept.
        if let Some(r) = &record {
            self.decoded.sub(r.chunks.len());
        }
        record
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
    /// exactly what a snapshot round trip produces, held in memory.
    pub fn compact(&mut self) {
        let bytes = self.encode_to_vec();
        if let Some(fresh) = Index::open(Arc::new(super::Backing::Owned(bytes)), 0) {
            *self = fresh;
        }
    }
}

impl FileRecord {
    /// The file-level fields, without chunks.
    pub(super) fn clone_head(&self) -> FileRecord {
        FileRecord {
            rel_path: self.rel_path.clone(),
            content_hash: self.content_hash,
            size: self.size,
            mtime_ns: self.mtime_ns,
            language: self.language,
            skipped: self.skipped,
            chunks: Vec::new(),
        }
    }
}
