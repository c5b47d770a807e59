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

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use contextgraph_types::Timestamp;

use crate::chunk::{Chunk, ChunkKind, ImportRef, SymbolInfo};
use crate::codec::{Reader, Writer};
use crate::lang::Language;
use crate::tokenize::term_frequencies;
use crate::walk::SkipReason;

/// Everything remembered about one chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRecord {
    /// Chunk kind (frame kind).
    pub kind: ChunkKind,
    /// Id within the file.
    pub local_id: String,
    /// Title without path.
    pub title: String,
    /// Symbol details for symbol chunks.
    pub symbol: Option<SymbolInfo>,
    /// First line (1-based).
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// Bytes of the region (for honest costs before reading the file).
    pub byte_len: u32,
    /// SHA-256 of the region's bytes when indexed.
    pub digest: [u8; 32],
    /// Provenance `method`.
    pub method: String,
    /// Compact rendering, for long items.
    pub outline: Option<String>,
    /// When this exact content was first indexed.
    pub recorded_at: Timestamp,
    /// When this content is known to have existed (never after `recorded_at`).
    pub valid_from: Timestamp,
    /// Own-text term frequencies, sorted by term. Filled by
    /// [`build_chunk_records`]; empty in records read back from an [`Index`]
    /// (which keeps them as postings: [`Index::chunk_terms`]).
    pub terms: Vec<(String, u32)>,
    /// Own-text token count (BM25 document length).
    pub doc_len: u32,
    /// Called names.
    pub calls: Vec<String>,
    /// Referenced type names.
    pub references: Vec<String>,
    /// Names mentioned in doc code spans.
    pub documents: Vec<String>,
    /// Imports.
    pub imports: Vec<ImportRef>,
}

/// Everything remembered about one file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRecord {
    /// Path relative to the root, `/`-separated.
    pub rel_path: String,
    /// SHA-256 of the whole file when indexed.
    pub content_hash: [u8; 32],
    /// Size when indexed.
    pub size: u64,
    /// Modification time when indexed, nanoseconds since the epoch.
    pub mtime_ns: Option<i128>,
    /// How it was chunked.
    pub language: Language,
    /// Set when a content gate refused the file (it then has no chunks).
    pub skipped: Option<SkipReason>,
    /// The chunks.
    pub chunks: Vec<ChunkRecord>,
}

/// Turn chunker output into records: region digests, terms, timestamps.
/// `previous` is the file's earlier record, whose timestamps are kept for
/// chunks whose content did not change (so `as_of` pins stay meaningful
/// across edits elsewhere in the file).
pub fn build_chunk_records(
    text: &str,
    chunks: Vec<Chunk>,
    previous: Option<&FileRecord>,
    now: Timestamp,
    mtime: Option<Timestamp>,
) -> Vec<ChunkRecord> {
    let lines = crate::chunk::LineIndex::new(text);
    let mut out = Vec::with_capacity(chunks.len());
    for c in chunks {
        let Some(region) = lines.slice(text, c.start_line, c.end_line) else {
            continue;
        };
        let digest = sha256(region.as_bytes());
        let own_text = own_text(text, &lines, &c);
        let (terms, doc_len) = term_frequencies(&own_text);
        let earlier = previous.and_then(|p| {
            p.chunks
                .iter()
                .find(|o| o.local_id == c.local_id && o.digest == digest)
        });
        let (recorded_at, valid_from) = match earlier {
            Some(o) => (o.recorded_at, o.valid_from),
            // valid_from: the file's mtime when it is plausible (not in the future).
            None => (now, mtime.filter(|m| *m <= now).unwrap_or(now)),
        };
        out.push(ChunkRecord {
            kind: c.kind,
            local_id: c.local_id,
            title: c.title,
            symbol: c.symbol,
            start_line: c.start_line,
            end_line: c.end_line,
            byte_len: u32::try_from(region.len()).unwrap_or(u32::MAX),
            digest,
            method: c.method.to_owned(),
            outline: c.outline,
            recorded_at,
            valid_from,
            terms,
            doc_len,
            calls: c.calls,
            references: c.references,
            documents: c.documents,
            imports: c.imports,
        });
    }
    out
}

/// The chunk's own text: its lines minus those of nested chunks, plus the
/// path (so a query naming a file finds its chunks).
pub(crate) fn own_text(text: &str, lines: &crate::chunk::LineIndex, c: &Chunk) -> String {
    let mut nested = c.nested.clone();
    nested.sort_unstable();
    let mut out = String::new();
    let mut line = c.start_line;
    for (a, b) in nested {
        if a > line {
            out.push_str(lines.slice(text, line, a - 1).unwrap_or(""));
        }
        line = line.max(b + 1);
    }
    if line <= c.end_line {
        out.push_str(lines.slice(text, line, c.end_line).unwrap_or(""));
    }
    if let Some(s) = &c.symbol {
        out.push(' ');
        out.push_str(&s.qualified);
    }
    out.push(' ');
    out.push_str(&c.title);
    out
}

/// SHA-256 of bytes, raw.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

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

/// `doc_lens` marker of a tombstoned slot (one array says both "alive" and
/// "how long", so the postings loop touches a single cache line per entry).
const DEAD: u32 = u32::MAX;

/// A run of `(slot, tf)` postings.
type PostingRun<'a> = &'a [(u32, u32)];

/// Terms interned to dense ids.
///
/// Ids `0..frozen_len` are the frozen, sorted terms (looked up by binary
/// search in one blob); later ids come from the tail map.
#[derive(Debug, Default, Clone)]
pub struct TermDict {
    blob: String,
    /// `frozen_len + 1` offsets into `blob`.
    offsets: Vec<u32>,
    tail: HashMap<Box<str>, u32>,
    tail_terms: Vec<Box<str>>,
}

impl TermDict {
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

    fn intern(&mut self, term: &str) -> (u32, bool) {
        if let Some(id) = self.get(term) {
            return (id, false);
        }
        let id = self.len() as u32;
        self.tail.insert(Box::from(term), id);
        self.tail_terms.push(Box::from(term));
        (id, true)
    }
}

#[derive(Debug, Default, Clone)]
struct Posting {
    /// Live documents containing the term.
    df: u32,
    /// Range of the frozen arena holding this term's loaded postings.
    frozen: (u32, u32),
    /// `(slot, tf)` added since the load, in slot order; dead slots included
    /// until compaction.
    extra: Vec<(u32, u32)>,
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

/// Per slot, the ids of its terms: the postings inverted. Only removal and
/// [`Index::chunk_terms`] need it, so it is built on first use (or in the
/// background, [`Index::warm_up`]), not during a load. Built at any time it
/// is exact (it derives from the postings as they are), and once built every
/// upsert extends it.
#[derive(Debug, Default, Clone)]
struct SlotTerms {
    /// Per slot: start of its term ids in `ids` (one extra at the end).
    start: Vec<usize>,
    ids: Vec<u32>,
}

/// The reverse edges only anchored queries and the proximity walk read;
/// like [`SlotTerms`], built on first use (from the live records) and then
/// extended by every upsert. Removal leaves dead slots in (readers skip them).
#[derive(Debug, Default, Clone)]
struct Edges {
    /// Bare name → slots that call, reference or document it.
    mentions: HashMap<String, Vec<u32>>,
    /// Candidate import path → importing slots.
    importers: HashMap<String, Vec<u32>>,
}

impl Edges {
    fn link(&mut self, slot: u32, c: &ChunkRecord) {
        for name in c.calls.iter().chain(&c.references).chain(&c.documents) {
            match self.mentions.get_mut(name.as_str()) {
                Some(v) => v.push(slot),
                None => {
                    self.mentions.insert(name.clone(), vec![slot]);
                }
            }
        }
        for imp in &c.imports {
            for cand in &imp.candidates {
                match self.importers.get_mut(cand.as_str()) {
                    Some(v) => v.push(slot),
                    None => {
                        self.importers.insert(cand.clone(), vec![slot]);
                    }
                }
            }
        }
    }
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
            c.terms = self.chunk_terms(e.first_slot + i as u32);
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

    /// A live slot's own-text term frequencies, sorted by term.
    pub fn chunk_terms(&self, slot: u32) -> Vec<(String, u32)> {
        let Some((a, b)) = self.slot_term_range(slot) else {
            return Vec::new();
        };
        let mut out: Vec<(String, u32)> = self.slot_terms().ids[a..b]
            .iter()
            .filter_map(|&id| {
                let tf = self.tf_of(id, slot)?;
                Some((self.dict.term(id)?.to_owned(), tf))
            })
            .collect();
        out.sort_unstable();
        out
    }

    fn slot_term_range(&self, slot: u32) -> Option<(usize, usize)> {
        let i = slot as usize;
        let start = &self.slot_terms().start;
        Some((*start.get(i)?, *start.get(i + 1)?))
    }

    /// The slot → term ids inversion, built from the postings on first use.
    fn slot_terms(&self) -> &SlotTerms {
        self.slot_terms.get_or_init(|| {
            let n_slots = self.slots.len();
            let mut counts: Vec<usize> = vec![0; n_slots];
            let runs = || {
                self.postings.iter().enumerate().flat_map(|(id, p)| {
                    let frozen = self
                        .arena
                        .get(p.frozen.0 as usize..p.frozen.1 as usize)
                        .unwrap_or(&[]);
                    frozen.iter().chain(&p.extra).map(move |e| (id as u32, e.0))
                })
            };
            for (_, s) in runs() {
                if let Some(c) = counts.get_mut(s as usize) {
                    *c += 1;
                }
            }
            let mut start: Vec<usize> = Vec::with_capacity(n_slots + 1);
            let mut acc = 0usize;
            for c in &counts {
                start.push(acc);
                acc += c;
            }
            start.push(acc);
            let mut fill = start.clone();
            let mut ids = vec![0u32; acc];
            for (id, s) in runs() {
                if let Some(at) = fill.get_mut(s as usize) {
                    ids[*at] = id;
                    *at += 1;
                }
            }
            SlotTerms { start, ids }
        })
    }

    /// The reverse edges, built from the records on first use.
    fn edges(&self) -> &Edges {
        self.edges.get_or_init(|| {
            let mut edges = Edges::default();
            for e in self.files.iter().flatten() {
                for (i, c) in e.record.chunks.iter().enumerate() {
                    edges.link(e.first_slot + i as u32, c);
                }
            }
            edges
        })
    }

    /// Build what a loaded index derives lazily (the slot → terms inversion
    /// and the reverse edges), so that neither the first anchored query nor
    /// the first refresh pays for it. Meant for a background thread right
    /// after a load; queries are answered meanwhile.
    pub fn warm_up(&self) {
        self.slot_terms();
        self.edges();
    }

    fn tf_of(&self, id: u32, slot: u32) -> Option<u32> {
        let p = self.postings.get(id as usize)?;
        let frozen = &self.arena[p.frozen.0 as usize..p.frozen.1 as usize];
        [frozen, p.extra.as_slice()].into_iter().find_map(|list| {
            list.binary_search_by_key(&slot, |e| e.0)
                .ok()
                .map(|i| list[i].1)
        })
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
            for (term, tf) in std::mem::take(&mut c.terms) {
                let (id, new) = self.dict.intern(&term);
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

    /// Record a chunk's definition in the symbol table.
    fn link_defs(&mut self, slot: u32, c: &ChunkRecord) {
        if let Some(s) = &c.symbol {
            if c.kind == ChunkKind::Symbol && !s.kind_label.starts_with("impl") {
                match self.defs.get_mut(s.name.as_str()) {
                    Some(v) => v.push(slot),
                    None => {
                        self.defs.insert(s.name.clone(), vec![slot]);
                    }
                }
            }
        }
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

    /// Number of live chunks containing `term`.
    pub fn df(&self, term: &str) -> u32 {
        self.dict
            .get(term)
            .and_then(|id| self.postings.get(id as usize))
            .map_or(0, |p| p.df)
    }

    /// Live postings of `term`: `(slot, tf, doc_len)`.
    pub fn postings(&self, term: &str) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        let (frozen, extra): (PostingRun<'_>, PostingRun<'_>) = match self
            .dict
            .get(term)
            .and_then(|id| self.postings.get(id as usize))
        {
            Some(p) => (
                &self.arena[p.frozen.0 as usize..p.frozen.1 as usize],
                &p.extra,
            ),
            None => (&[], &[]),
        };
        frozen.iter().chain(extra).filter_map(move |&(s, tf)| {
            let len = self.doc_lens[s as usize];
            (len != DEAD).then_some((s, tf, len))
        })
    }

    fn live_only<'a>(&'a self, list: Option<&'a Vec<u32>>) -> impl Iterator<Item = u32> + 'a {
        list.map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .copied()
            .filter(|&s| self.is_live(s))
    }

    /// Live slots defining a bare name.
    pub fn definitions<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.defs.get(name))
    }

    /// Live slots that call, reference or document a bare name.
    pub fn mentions_of<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.edges().mentions.get(name))
    }

    /// Live slots importing a workspace path (by one of their candidates).
    pub fn importers_of<'a>(&'a self, rel_path: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.edges().importers.get(rel_path))
    }

    /// Total number of slots ever allocated (live or dead).
    pub fn slot_capacity(&self) -> usize {
        self.slots.len()
    }

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
    let dict = TermDict {
        blob,
        offsets,
        ..TermDict::default()
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(path: &str, chunks: &[&[(&str, u32)]]) -> FileRecord {
        FileRecord {
            rel_path: path.into(),
            content_hash: [1; 32],
            size: 1,
            mtime_ns: Some(7),
            language: Language::detect(path),
            skipped: None,
            chunks: chunks
                .iter()
                .enumerate()
                .map(|(i, terms)| ChunkRecord {
                    kind: ChunkKind::Snippet,
                    local_id: format!("L{i}"),
                    title: format!("t{i}"),
                    symbol: None,
                    start_line: 1 + i as u32,
                    end_line: 1 + i as u32,
                    byte_len: 1,
                    digest: [2; 32],
                    method: "window".into(),
                    outline: None,
                    recorded_at: Timestamp::from_unix(1, 0),
                    valid_from: Timestamp::from_unix(1, 0),
                    terms: terms.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect(),
                    doc_len: terms.iter().map(|x| x.1).sum(),
                    calls: vec!["callee".into()],
                    references: Vec::new(),
                    documents: Vec::new(),
                    imports: Vec::new(),
                })
                .collect(),
        }
    }

    fn roundtrip(index: &Index) -> Index {
        let mut w = Writer::default();
        index.encode(&mut w);
        let mut r = Reader::new(&w.buf);
        let out = Index::decode(&mut r).expect("decodes");
        assert!(r.is_empty());
        out
    }

    fn sorted(mut v: Vec<FileRecord>) -> Vec<FileRecord> {
        v.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
        v
    }

    #[test]
    fn v3_payload_round_trips_records_terms_and_statistics() {
        let a = record("a.rs", &[&[("alpha", 2), ("beta", 1)], &[("beta", 3)]]);
        let b = record("b.rs", &[&[("alpha", 1), ("gamma", 1)]]);
        let index = Index::from_records([a.clone(), b.clone()]);
        let back = roundtrip(&index);
        assert_eq!(sorted(back.records_with_terms()), sorted(vec![a, b]));
        assert_eq!(
            (back.df("alpha"), back.df("beta"), back.df("nope")),
            (2, 2, 0)
        );
        assert_eq!(back.avg_len(), index.avg_len());
        assert_eq!(back.mentions_of("callee").count(), 3);
        let mut p: Vec<_> = back.postings("beta").collect();
        p.sort_unstable();
        assert_eq!(p.iter().map(|x| x.1).collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn edits_after_a_load_touch_only_that_files_postings_and_compact_to_a_fresh_build() {
        let a = record("a.rs", &[&[("alpha", 2), ("beta", 1)]]);
        let b = record("b.rs", &[&[("beta", 1)]]);
        let mut loaded = roundtrip(&Index::from_records([a.clone(), b.clone()]));
        // New version of a.rs: one term gone, one new (lands in the dictionary tail).
        let a2 = record("a.rs", &[&[("beta", 4), ("delta", 1)]]);
        loaded.upsert(a2.clone());
        assert_eq!(
            (loaded.df("alpha"), loaded.df("beta"), loaded.df("delta")),
            (0, 2, 1)
        );
        assert_eq!(loaded.postings("alpha").count(), 0, "dead slot skipped");
        assert_eq!(loaded.chunk_count(), 2);
        let fresh = Index::from_records([b.clone(), a2.clone()]);
        let mut compacted = loaded.clone();
        compacted.compact();
        assert_eq!(compacted.slot_capacity(), 2, "dead slots swept");
        for ix in [&loaded, &compacted] {
            assert_eq!(
                sorted(ix.records_with_terms()),
                sorted(fresh.records_with_terms())
            );
            assert_eq!(ix.avg_len(), fresh.avg_len());
            for t in ["alpha", "beta", "delta"] {
                assert_eq!(ix.df(t), fresh.df(t), "{t}");
            }
        }
        loaded.remove("b.rs");
        assert_eq!((loaded.df("beta"), loaded.file_count()), (1, 1));
    }

    #[test]
    fn lazily_derived_parts_are_exact_whether_built_before_or_after_edits() {
        let mut a = record("a.rs", &[&[("alpha", 2), ("beta", 1)]]);
        a.chunks[0].imports = vec![ImportRef {
            module: "crate::b".into(),
            candidates: vec!["b.rs".into()],
        }];
        let b = record("b.rs", &[&[("beta", 1)], &[("gamma", 3)]]);
        let a2 = record("a.rs", &[&[("delta", 1)]]);
        let fresh = Index::from_records([b.clone(), a2.clone()]);
        let loaded = roundtrip(&Index::from_records([a.clone(), b.clone()]));
        assert_eq!(
            loaded.importers_of("b.rs").count(),
            1,
            "edges built on demand"
        );
        // Edit once with the lazy parts already built, once with them still unbuilt.
        let mut warm = loaded.clone();
        warm.warm_up();
        let mut cold = roundtrip(&Index::from_records([a, b]));
        for ix in [&mut warm, &mut cold] {
            ix.upsert(a2.clone());
            assert_eq!(ix.importers_of("b.rs").count(), 0, "the importer is gone");
            assert_eq!(ix.mentions_of("callee").count(), 3);
            for t in ["alpha", "beta", "gamma", "delta"] {
                assert_eq!(ix.df(t), fresh.df(t), "{t}");
            }
            assert_eq!(
                sorted(ix.records_with_terms()),
                sorted(fresh.records_with_terms())
            );
            ix.remove("b.rs");
            assert_eq!((ix.df("beta"), ix.df("gamma"), ix.df("delta")), (0, 0, 1));
        }
    }

    /// The payload split after its records section (`u64` length + records).
    fn split(index: &Index) -> (Vec<u8>, Vec<u8>) {
        let mut w = Writer::default();
        index.encode(&mut w);
        let len = u64::from_le_bytes(w.buf[..8].try_into().expect("8 bytes")) as usize;
        let terms = w.buf.split_off(8 + len);
        (w.buf, terms)
    }

    #[test]
    fn a_posting_naming_a_slot_no_record_has_is_refused() {
        // Each section is well-formed alone; together the postings name
        // slot 1 of an index with a single chunk.
        let (one_chunk, _) = split(&Index::from_records([record("a.rs", &[&[("alpha", 1)]])]));
        let (_, two_chunks) = split(&Index::from_records([record(
            "a.rs",
            &[&[("alpha", 1)], &[("alpha", 1)]],
        )]));
        let mut bad = one_chunk.clone();
        bad.extend_from_slice(&two_chunks);
        assert!(Index::decode(&mut Reader::new(&bad)).is_none());
        let (_, one_terms) = split(&Index::from_records([record("a.rs", &[&[("alpha", 1)]])]));
        let mut good = one_chunk;
        good.extend_from_slice(&one_terms);
        assert!(Index::decode(&mut Reader::new(&good)).is_some());
    }

    #[test]
    fn corrupt_v3_payloads_are_refused_not_trusted() {
        let index = Index::from_records([record("a.rs", &[&[("alpha", 2), ("beta", 1)]])]);
        let mut w = Writer::default();
        index.encode(&mut w);
        let good = w.buf;
        for cut in 0..good.len() {
            let mut r = Reader::new(&good[..cut]);
            assert!(
                Index::decode(&mut r).is_none_or(|_| !r.is_empty()),
                "a payload cut at {cut} bytes must not decode whole"
            );
        }
        // Unsorted dictionary: swap the two terms' first letters.
        let mut bad = good.clone();
        let at = bad.windows(5).position(|x| x == b"alpha").expect("alpha");
        let bt = bad.windows(4).position(|x| x == b"beta").expect("beta");
        bad[at] = b'c';
        bad[bt] = b'a';
        assert!(Index::decode(&mut Reader::new(&bad)).is_none());
    }
}
