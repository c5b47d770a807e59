//! The index: per-file records (what is persisted) and the in-memory search
//! structures derived from them (BM25 postings, the symbol table and the
//! reverse edges the proximity ranking walks).
//!
//! Terms are interned in a [`TermDict`]: a sorted, frozen part (one string
//! blob plus offsets, exactly as loaded from the snapshot, so loading makes
//! no per-term allocation) and a small hash-map tail for terms first seen
//! after the load. Postings are addressed by term id: the frozen postings
//! live in one flat arena, postings added later in a per-term tail.
//!
//! Updates are incremental: replacing or removing a file tombstones its chunk
//! slots and appends new ones, adjusting document frequencies and lengths as
//! it goes, so re-indexing one file costs that file's postings, not the
//! workspace. Postings of tombstoned slots are skipped at query time and
//! swept by [`Index::compact_if_sparse`].
//!
//! Records held by an index keep their [`ChunkRecord::terms`] *empty*: the
//! terms live in the postings (see [`Index::chunk_terms`]), which is what
//! keeps a large index small in memory.
//!
//! Two derived structures are built on first use rather than during a load
//! (they cost about a third of it): the slot → term-ids inversion (removal
//! and `chunk_terms` need it) and the mention/import reverse edges (anchored
//! queries and the proximity walk need them). [`Index::warm_up`] builds both;
//! the provider calls it on a background thread right after opening.

// foldhash: seeded per process, much faster than SipHash on paths and names.
use foldhash::HashMap;
use std::sync::{Arc, OnceLock};

mod edges;
mod postings;
mod records;
mod snapshot;
mod terms;
#[cfg(test)]
mod tests;
mod update;

#[cfg(feature = "bench-internals")]
pub(crate) use records::own_text;
pub use records::{build_chunk_records, sha256, ChunkRecord, FileRecord};
pub use terms::TermDict;

use crate::tokenize::TermCounts;

use edges::Edges;
use postings::{Posting, SlotTerms, DEAD};

/// A live chunk slot: which file and which of its chunks.
///
/// Kept for API compatibility; the index itself addresses files by number.
#[derive(Debug, Clone)]
pub struct Slot {
    /// The file's path.
    pub file: Arc<str>,
    /// Position in the file's chunk list.
    pub ordinal: u32,
}

#[derive(Debug, Clone)]
struct FileEntry {
    record: FileRecord,
    first_slot: u32,
}

/// Where a slot's chunk lives: file number and chunk ordinal.
#[derive(Debug, Clone, Copy)]
struct SlotRef {
    file: u32,
    ordinal: u32,
}

/// The in-memory index.
#[derive(Debug, Default, Clone)]
pub struct Index {
    files: Vec<Option<FileEntry>>,
    by_path: HashMap<Arc<str>, u32>,
    slots: Vec<SlotRef>,
    /// Per slot: BM25 length, or [`DEAD`].
    doc_lens: Vec<u32>,
    /// Derived from the postings on first use (see [`SlotTerms`]).
    slot_terms: OnceLock<SlotTerms>,
    dict: TermDict,
    postings: Vec<Posting>,
    /// Frozen postings `(slot, tf)` of all terms, term after term.
    arena: Vec<(u32, u32)>,
    /// Bare symbol name → defining slots (every frame's relations need it,
    /// so it is built eagerly).
    defs: HashMap<String, Vec<u32>>,
    /// Derived from the records on first use (see [`Edges`]).
    edges: OnceLock<Edges>,
    live: u32,
    total_len: u64,
}

impl Index {
    /// An index over `records` (whose `terms` must be filled, as
    /// [`build_chunk_records`] does).
    pub fn from_records(records: impl IntoIterator<Item = FileRecord>) -> Index {
        let mut index = Index::default();
        for r in records {
            index.upsert(r);
        }
        index
    }

    /// Number of files known (including content-gated ones).
    pub fn file_count(&self) -> usize {
        self.by_path.len()
    }

    /// Number of live chunks.
    pub fn chunk_count(&self) -> usize {
        self.live as usize
    }

    /// Number of distinct terms ever interned (live or not).
    pub fn term_count(&self) -> usize {
        self.dict.len()
    }

    /// Average live document length.
    pub fn avg_len(&self) -> f32 {
        if self.live == 0 {
            1.0
        } else {
            (self.total_len as f32 / self.live as f32).max(1.0)
        }
    }

    fn entry(&self, rel_path: &str) -> Option<&FileEntry> {
        let i = *self.by_path.get(rel_path)?;
        self.files.get(i as usize)?.as_ref()
    }

    /// The record of a file (its chunks' `terms` are empty, see the module docs).
    pub fn file(&self, rel_path: &str) -> Option<&FileRecord> {
        self.entry(rel_path).map(|e| &e.record)
    }

    /// All file records, in no particular order.
    pub fn records(&self) -> impl Iterator<Item = &FileRecord> {
        self.files.iter().flatten().map(|e| &e.record)
    }

    /// All file records with their chunks' `terms` filled back in from the
    /// postings (costly: for export and tests, not for serving).
    pub fn records_with_terms(&self) -> Vec<FileRecord> {
        self.files
            .iter()
            .flatten()
            .filter_map(|e| self.record_with_terms(&e.record.rel_path))
            .collect()
    }

    /// One file's record with its chunks' `terms` filled back in.
    pub fn record_with_terms(&self, rel_path: &str) -> Option<FileRecord> {
        let e = self.entry(rel_path)?;
        let mut r = e.record.clone();
        for (i, c) in r.chunks.iter_mut().enumerate() {
            c.terms = TermCounts::from_pairs(self.chunk_terms(e.first_slot + i as u32));
        }
        Some(r)
    }

    /// The slot ids of a file's chunks.
    pub fn file_slots(&self, rel_path: &str) -> impl Iterator<Item = u32> + '_ {
        self.entry(rel_path)
            .map(|e| e.first_slot..e.first_slot + e.record.chunks.len() as u32)
            .into_iter()
            .flatten()
    }

    /// Whether a slot holds a live chunk.
    pub fn is_live(&self, slot: u32) -> bool {
        self.doc_lens.get(slot as usize).is_some_and(|&l| l != DEAD)
    }

    /// The number of a live slot's file, below [`Index::file_capacity`]:
    /// lets a query keep per-file values in a plain vector.
    pub fn file_number(&self, slot: u32) -> Option<u32> {
        if !self.is_live(slot) {
            return None;
        }
        self.slots.get(slot as usize).map(|s| s.file)
    }

    /// One more than the highest file number in use.
    pub fn file_capacity(&self) -> usize {
        self.files.len()
    }

    /// A live slot's file path and chunk.
    pub fn chunk(&self, slot: u32) -> Option<(&str, &ChunkRecord)> {
        if !self.is_live(slot) {
            return None;
        }
        let s = self.slots.get(slot as usize)?;
        let entry = self.files.get(s.file as usize)?.as_ref()?;
        entry
            .record
            .chunks
            .get(s.ordinal as usize)
            .map(|c| (entry.record.rel_path.as_str(), c))
    }

    /// Find a chunk by file and local id.
    pub fn find(&self, rel_path: &str, local_id: &str) -> Option<(u32, &ChunkRecord)> {
        let e = self.entry(rel_path)?;
        e.record
            .chunks
            .iter()
            .position(|c| c.local_id == local_id)
            .map(|i| (e.first_slot + i as u32, &e.record.chunks[i]))
    }

    /// Total number of slots ever allocated (live or dead).
    pub fn slot_capacity(&self) -> usize {
        self.slots.len()
    }

    /// Build what a loaded index derives lazily (the slot → terms inversion
    /// and the reverse edges), so that neither the first anchored query nor
    /// the first refresh pays for it. Meant for a background thread right
    /// after a load; queries are answered meanwhile.
    pub fn warm_up(&self) {
        self.slot_terms();
        self.edges();
    }
}
