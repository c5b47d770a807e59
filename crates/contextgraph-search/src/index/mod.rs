//! The index: per-file records (what is persisted) and the in-memory search
//! structures derived from them (BM25 postings, the symbol table and the
//! reverse edges the proximity ranking walks).
//!
//! A loaded index is mostly the saved snapshot read in place (`frozen.rs`):
//! the file is memory-mapped, its sections checksummed, and only the
//! per-file table and the per-slot lengths are decoded. Postings, the term
//! dictionary, the symbol table, the reverse edges, the slot → terms lists
//! and each file's chunk records are read from the mapped bytes when a
//! query or a refresh touches them (a file's chunks are then kept decoded).
//! What changes after the load lives in memory beside the mapped part:
//! terms first seen since, postings added since, document frequencies
//! lowered by removals, names linked since. A snapshot write or a
//! compaction folds both into one new snapshot.
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

// foldhash: seeded per process, much faster than SipHash on paths and names.
use foldhash::HashMap;
use std::sync::{Arc, OnceLock};

mod edges;
mod frozen;
mod packed;
mod postings;
mod records;
mod snapshot;
mod terms;
#[cfg(test)]
pub(crate) mod tests;
mod update;

pub(crate) use records::first_valid_from;
#[cfg(feature = "bench-internals")]
pub(crate) use records::own_text;
pub use records::{build_chunk_records, build_chunk_records_in, sha256, ChunkRecord, FileRecord};
pub use terms::TermDict;

use crate::file_role::{file_role, FileRole};
use crate::query_terms::is_test_path;
use crate::tokenize::TermCounts;

use edges::Edges;
use frozen::Frozen;
pub(crate) use frozen::{Backing, DIRECTORY_BYTES};
use packed::PackedChunks;
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
    /// The record's file-level fields, `chunks` empty: always in memory.
    head: FileRecord,
    /// The whole record, decoded on first use from the snapshot or from
    /// `packed`.
    record: OnceLock<FileRecord>,
    /// The chunks of a file upserted since the load, encoded (see
    /// [`packed`]).
    packed: Option<PackedChunks>,
    /// Where the chunks lie in the snapshot's records section (loaded files).
    saved: Option<std::ops::Range<usize>>,
    /// The CRC-32 of the saved chunks, and whether they matched it (checked
    /// on first use, see [`frozen`]).
    saved_crc: u32,
    intact: OnceLock<bool>,
    chunk_count: u32,
    first_slot: u32,
    /// The file's role and whether its path is test code
    /// ([`Index::file_traits`]), found on first use.
    traits: OnceLock<(FileRole, bool)>,
}

/// Where a slot's chunk lives: file number and chunk ordinal.
#[derive(Debug, Clone, Copy)]
struct SlotRef {
    file: u32,
    ordinal: u32,
}

/// The index: the saved snapshot read in place plus what changed since.
#[derive(Debug, Default, Clone)]
pub struct Index {
    files: Vec<Option<FileEntry>>,
    by_path: HashMap<Arc<str>, u32>,
    slots: Vec<SlotRef>,
    /// Per slot: BM25 length, or [`DEAD`].
    doc_lens: Vec<u32>,
    /// The loaded snapshot, when there is one (slots below
    /// `frozen_slots` and term ids below the dictionary's frozen length
    /// are described by it).
    frozen: Option<Arc<Frozen>>,
    frozen_slots: u32,
    /// Per saved slot, its chunk record, decoded on first use (a query
    /// reads the chunks it ranks, not their whole files).
    saved_chunks: Vec<OnceLock<Option<Box<ChunkRecord>>>>,
    /// Chunk records decoded and kept since the last
    /// [`forget_decoded`](Index::forget_decoded) (see [`DecodedCount`]).
    decoded: DecodedCount,
    /// Per slot added since the load, its term ids.
    slot_terms: SlotTerms,
    dict: TermDict,
    /// Postings of terms first seen since the load (id − frozen length).
    tail_postings: Vec<Posting>,
    /// Saved terms whose postings or frequency changed since the load.
    changed_postings: HashMap<u32, Posting>,
    /// Bare symbol name → defining slots linked since the load.
    defs: HashMap<String, Vec<u32>>,
    /// Reverse edges linked since the load.
    edges: Edges,
    live: u32,
    total_len: u64,
    /// Set when saved chunks did not match their checksum: they are not
    /// served, and the next refresh rebuilds the index from the files.
    corrupt: Arc<std::sync::atomic::AtomicBool>,
    /// Which numbering of the slots this is (see [`Index::layout_id`]).
    layout: LayoutId,
}

/// How many chunk records an index has decoded and kept, in
/// `saved_chunks` and in its files' decoded records. Each is kept for the
/// next query that reads it, so a long-running server's memory grew with
/// the variety of the goals it was asked, toward the whole index decoded
/// (16k-file tree: 58 MB of heap after 8 goals, 331 MB after 300); the
/// count lets the server forget them past a budget
/// ([`Index::forget_decoded`]). A clone starts from the count it copies.
#[derive(Debug, Default)]
struct DecodedCount(std::sync::atomic::AtomicUsize);

impl DecodedCount {
    fn add(&self, n: usize) {
        self.0.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// `n` records went with their file (see [`Index::remove`]).
    fn sub(&mut self, n: usize) {
        let count = self.0.get_mut();
        *count = count.saturating_sub(n);
    }

    fn get(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Clone for DecodedCount {
    fn clone(&self) -> Self {
        DecodedCount(std::sync::atomic::AtomicUsize::new(self.get()))
    }
}

/// A process-unique number for one numbering of an index's slots. Slots
/// are only ever appended (an upsert tombstones a file's slots and appends
/// new ones), so while the id stays the same a slot keeps naming the same
/// chunk content; a compaction or a load renumbers them and takes a new id.
/// A clone takes a new id too: two clones could append different content
/// at the same slot numbers.
#[derive(Debug)]
struct LayoutId(u64);

static NEXT_LAYOUT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Default for LayoutId {
    fn default() -> Self {
        LayoutId(NEXT_LAYOUT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl Clone for LayoutId {
    fn clone(&self) -> Self {
        LayoutId::default()
    }
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

    /// The record of a file (its chunks' `terms` are empty, see the module
    /// docs), its chunks decoded from the snapshot on first use.
    pub fn file(&self, rel_path: &str) -> Option<&FileRecord> {
        self.entry(rel_path).map(|e| self.record_of(e))
    }

    /// A file's file-level fields (path, hash, size, time, language, gate)
    /// with `chunks` *empty*: what a freshness check compares, without
    /// decoding the file's chunks.
    pub fn file_head(&self, rel_path: &str) -> Option<&FileRecord> {
        self.entry(rel_path).map(|e| &e.head)
    }

    /// Every file's [`file_head`](Self::file_head), in no particular order.
    pub fn heads(&self) -> impl Iterator<Item = &FileRecord> {
        self.files.iter().flatten().map(|e| &e.head)
    }

    /// All file records, in no particular order (decodes every file's
    /// chunks: for export and tests; serving uses [`heads`](Self::heads)).
    pub fn records(&self) -> impl Iterator<Item = &FileRecord> {
        self.files.iter().flatten().map(|e| self.record_of(e))
    }

    /// A saved slot's chunk record, decoded alone.
    fn saved_chunk(&self, slot: u32) -> Option<&ChunkRecord> {
        let frozen = self.frozen.as_ref()?;
        self.saved_chunks
            .get(slot as usize)?
            .get_or_init(|| {
                let s = self.slots.get(slot as usize)?;
                let e = self.files.get(s.file as usize)?.as_ref()?;
                let file = self.saved_bytes(e)?;
                let start = e.saved.as_ref()?.start;
                let bytes = file.get(frozen.chunk_at(slot)?.checked_sub(start)?..)?;
                let chunk = crate::codec::read_chunk(&mut crate::codec::Reader::new(bytes), false)?;
                self.decoded.add(1);
                Some(Box::new(chunk))
            })
            .as_deref()
    }

    /// A loaded file's saved chunks, once they matched their checksum.
    fn saved_bytes(&self, e: &FileEntry) -> Option<&[u8]> {
        let frozen = self.frozen.as_ref()?;
        let bytes = frozen.section(frozen::RECORDS).get(e.saved.clone()?)?;
        let intact = *e.intact.get_or_init(|| frozen::crc32(bytes) == e.saved_crc);
        if !intact {
            self.corrupt
                .store(true, std::sync::atomic::Ordering::Relaxed);
            return None;
        }
        Some(bytes)
    }

    /// Whether everything read so far matched its checksum (see
    /// `index/frozen.rs`); when not, the index must be rebuilt from the files.
    pub fn is_intact(&self) -> bool {
        !self.corrupt.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn record_of<'a>(&'a self, e: &'a FileEntry) -> &'a FileRecord {
        e.record.get_or_init(|| {
            let mut record = e.head.clone();
            // A failure reads as a file without chunks (its slots then
            // serve nothing): see `decode_chunks`.
            if let Some(chunks) = self.decode_chunks(e) {
                self.decoded.add(chunks.len());
                record.chunks = chunks;
            }
            record
        })
    }

    /// Chunk records decoded and kept since the index was made or last
    /// [`forget_decoded`](Self::forget_decoded) (a file decoded whole counts
    /// its chunks).
    pub fn decoded_records(&self) -> usize {
        self.decoded.get()
    }

    /// Drop every decoded chunk record that can be decoded again (from the
    /// snapshot, or from a file's packed chunks), so that memory held for
    /// earlier queries is given back; the next read decodes again, with the
    /// same result. A file whose decoded record is its only copy keeps it
    /// (none today: every file is saved or packed). Checksums already
    /// verified stay verified.
    pub fn forget_decoded(&mut self) {
        for chunk in &mut self.saved_chunks {
            chunk.take();
        }
        for e in self.files.iter_mut().flatten() {
            if e.packed.is_some() || e.saved.is_some() {
                e.record.take();
            }
        }
        self.decoded = DecodedCount::default();
    }

    /// A file's chunk records decoded from their packed form (encoded by
    /// us) or from the saved snapshot (checksummed at load); `None` when
    /// they cannot be, which is a bug of ours or a corrupt snapshot.
    fn decode_chunks(&self, e: &FileEntry) -> Option<Vec<ChunkRecord>> {
        if let Some(packed) = &e.packed {
            return packed.unpack(e.chunk_count as usize);
        }
        let mut r = crate::codec::Reader::new(self.saved_bytes(e)?);
        crate::codec::read_chunks(&mut r, false)
            .filter(|c| r.is_empty() && c.len() == e.chunk_count as usize)
    }

    /// A file's path, first slot and chunk records, by file number
    /// ([`file_number`](Self::file_number)), decoded for the caller and not
    /// kept (unless already decoded): a pass over every chunk (embedding
    /// them all for the semantic signal) would otherwise leave every
    /// record decoded in memory, doubling a large index's footprint.
    pub fn file_chunks_once(
        &self,
        file: u32,
    ) -> Option<(&str, u32, std::borrow::Cow<'_, [ChunkRecord]>)> {
        let e = self.files.get(file as usize)?.as_ref()?;
        let path = e.head.rel_path.as_str();
        if let Some(record) = e.record.get() {
            return Some((
                path,
                e.first_slot,
                std::borrow::Cow::Borrowed(&record.chunks),
            ));
        }
        let chunks = self.decode_chunks(e)?;
        Some((path, e.first_slot, std::borrow::Cow::Owned(chunks)))
    }

    /// All file records with their chunks' `terms` filled back in from the
    /// postings (costly: for export and tests, not for serving).
    pub fn records_with_terms(&self) -> Vec<FileRecord> {
        self.files
            .iter()
            .flatten()
            .filter_map(|e| self.record_with_terms(&e.head.rel_path))
            .collect()
    }

    /// One file's record with its chunks' `terms` filled back in.
    pub fn record_with_terms(&self, rel_path: &str) -> Option<FileRecord> {
        let e = self.entry(rel_path)?;
        let mut r = self.record_of(e).clone();
        for (i, c) in r.chunks.iter_mut().enumerate() {
            c.terms = TermCounts::from_pairs(self.chunk_terms(e.first_slot + i as u32));
        }
        Some(r)
    }

    /// The slot ids of a file's chunks.
    pub fn file_slots(&self, rel_path: &str) -> impl Iterator<Item = u32> + '_ {
        self.entry(rel_path)
            .map(|e| e.first_slot..e.first_slot + e.chunk_count)
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

    /// File `file`'s role ([`file_role`]) and whether its path is test
    /// code ([`is_test_path`]), by file number: both depend on the path
    /// and language alone, so each file's are found once (on the first
    /// query that ranks one of its chunks) rather than by every query
    /// (classifying a path cost the ranking a few thousand instructions
    /// per candidate file).
    pub fn file_traits(&self, file: u32) -> Option<(FileRole, bool)> {
        let e = self.files.get(file as usize)?.as_ref()?;
        Some(*e.traits.get_or_init(|| {
            let path = e.head.rel_path.as_str();
            (file_role(path, e.head.language), is_test_path(path))
        }))
    }

    /// One more than the highest file number in use.
    pub fn file_capacity(&self) -> usize {
        self.files.len()
    }

    /// A live slot's file path, without decoding its chunk (a saved chunk
    /// is decoded, and its file checksummed, on first use: resolving a name
    /// against dozens of candidate definitions only needs their paths).
    pub fn slot_path(&self, slot: u32) -> Option<&str> {
        if !self.is_live(slot) {
            return None;
        }
        let s = self.slots.get(slot as usize)?;
        let entry = self.files.get(s.file as usize)?.as_ref()?;
        Some(entry.head.rel_path.as_str())
    }

    /// A live slot's file path and chunk.
    pub fn chunk(&self, slot: u32) -> Option<(&str, &ChunkRecord)> {
        if !self.is_live(slot) {
            return None;
        }
        let s = self.slots.get(slot as usize)?;
        let entry = self.files.get(s.file as usize)?.as_ref()?;
        let path = entry.head.rel_path.as_str();
        if entry.record.get().is_none() {
            if let Some(c) = self.saved_chunk(slot) {
                return Some((path, c));
            }
        }
        self.record_of(entry)
            .chunks
            .get(s.ordinal as usize)
            .map(|c| (path, c))
    }

    /// Find a chunk by file and local id.
    pub fn find(&self, rel_path: &str, local_id: &str) -> Option<(u32, &ChunkRecord)> {
        let e = self.entry(rel_path)?;
        let chunks = &self.record_of(e).chunks;
        chunks
            .iter()
            .position(|c| c.local_id == local_id)
            .map(|i| (e.first_slot + i as u32, &chunks[i]))
    }

    /// Chunk records decoded so far (saved chunks read alone, and files
    /// whose chunks were decoded whole): what tests read to tell that a
    /// path did no per-chunk work.
    #[cfg(test)]
    pub(crate) fn decoded_chunks(&self) -> usize {
        let alone = self
            .saved_chunks
            .iter()
            .filter(|c| c.get().is_some())
            .count();
        let whole: usize = self
            .files
            .iter()
            .flatten()
            .filter_map(|e| e.record.get())
            .map(|r| r.chunks.len())
            .sum();
        alone + whole
    }

    /// Total number of slots ever allocated (live or dead).
    pub fn slot_capacity(&self) -> usize {
        self.slots.len()
    }

    /// Identifies this numbering of the slots: while it is unchanged, slot
    /// `s` below an earlier [`slot_capacity`](Self::slot_capacity) holds
    /// the same chunk content it held then (or is dead). What is kept per
    /// slot beside the index (the semantic signal's vectors) stays aligned
    /// by checking this id, instead of each slot's content.
    pub fn layout_id(&self) -> u64 {
        self.layout.0
    }

    /// The loaded snapshot this index extends, when there is one: its id
    /// (the SHA-256 of its section directory, as the store names it) and
    /// its number of slots, which are this index's slots `0..n`.
    pub fn saved_snapshot(&self) -> Option<([u8; 32], u32)> {
        self.frozen.as_ref().map(|f| (f.id, self.frozen_slots))
    }

    /// The live slots in ascending order: a snapshot written now numbers
    /// them `0..` in this order (see `index/snapshot.rs`).
    pub fn live_slot_numbers(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.slots.len() as u32).filter(|&s| self.is_live(s))
    }
}
