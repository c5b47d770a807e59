//! The index: per-file records (what is persisted) and the in-memory search
//! structures derived from them (BM25 postings, the symbol table and the
//! reverse edges the proximity ranking walks).
//!
//! Updates are incremental: replacing or removing a file tombstones its chunk
//! slots and appends new ones, adjusting document frequencies and lengths as
//! it goes, so re-indexing one file costs that file, not the workspace.
//! Postings of tombstoned slots are skipped at query time and swept by
//! [`Index::compact_if_sparse`].

use std::collections::HashMap;
use std::sync::Arc;

use contextgraph_types::Timestamp;

use crate::chunk::{Chunk, ChunkKind, ImportRef, SymbolInfo};
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
    /// Own-text term frequencies, sorted by term.
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
fn own_text(text: &str, lines: &crate::chunk::LineIndex, c: &Chunk) -> String {
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
#[derive(Debug, Clone)]
pub struct Slot {
    /// The file's path.
    pub file: Arc<str>,
    /// Position in the file's chunk list.
    pub ordinal: u32,
}

#[derive(Debug, Default, Clone)]
struct Posting {
    /// Live documents containing the term.
    df: u32,
    /// `(slot, term frequency)`, dead slots included until compaction.
    list: Vec<(u32, u32)>,
}

#[derive(Debug, Clone)]
struct FileEntry {
    record: FileRecord,
    first_slot: u32,
}

/// The in-memory index.
#[derive(Debug, Default, Clone)]
pub struct Index {
    files: HashMap<Arc<str>, FileEntry>,
    slots: Vec<Option<Slot>>,
    doc_lens: Vec<u32>,
    postings: HashMap<String, Posting>,
    /// Bare symbol name → defining slots.
    defs: HashMap<String, Vec<u32>>,
    /// Bare name → slots that call, reference or document it.
    mentions: HashMap<String, Vec<u32>>,
    /// Candidate import path → importing slots.
    importers: HashMap<String, Vec<u32>>,
    live: u32,
    total_len: u64,
}

impl Index {
    /// An index over `records`.
    pub fn from_records(records: impl IntoIterator<Item = FileRecord>) -> Index {
        let mut index = Index::default();
        for r in records {
            index.upsert(r);
        }
        index
    }

    /// Number of files known (including content-gated ones).
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Number of live chunks.
    pub fn chunk_count(&self) -> usize {
        self.live as usize
    }

    /// Average live document length.
    pub fn avg_len(&self) -> f32 {
        if self.live == 0 {
            1.0
        } else {
            (self.total_len as f32 / self.live as f32).max(1.0)
        }
    }

    /// The record of a file.
    pub fn file(&self, rel_path: &str) -> Option<&FileRecord> {
        self.files.get(rel_path).map(|e| &e.record)
    }

    /// All file records, in no particular order.
    pub fn records(&self) -> impl Iterator<Item = &FileRecord> {
        self.files.values().map(|e| &e.record)
    }

    /// The slot ids of a file's chunks.
    pub fn file_slots(&self, rel_path: &str) -> impl Iterator<Item = u32> + '_ {
        self.files
            .get(rel_path)
            .map(|e| e.first_slot..e.first_slot + e.record.chunks.len() as u32)
            .into_iter()
            .flatten()
    }

    /// A live slot's file path and chunk.
    pub fn chunk(&self, slot: u32) -> Option<(&str, &ChunkRecord)> {
        let s = self.slots.get(slot as usize)?.as_ref()?;
        let entry = self.files.get(&s.file)?;
        entry
            .record
            .chunks
            .get(s.ordinal as usize)
            .map(|c| (&*s.file, c))
    }

    /// Find a chunk by file and local id.
    pub fn find(&self, rel_path: &str, local_id: &str) -> Option<(u32, &ChunkRecord)> {
        let e = self.files.get(rel_path)?;
        e.record
            .chunks
            .iter()
            .position(|c| c.local_id == local_id)
            .map(|i| (e.first_slot + i as u32, &e.record.chunks[i]))
    }

    /// Insert or replace a file's record.
    pub fn upsert(&mut self, record: FileRecord) {
        self.remove(&record.rel_path);
        let file: Arc<str> = Arc::from(record.rel_path.as_str());
        let first_slot = self.slots.len() as u32;
        for (ordinal, c) in record.chunks.iter().enumerate() {
            let slot = first_slot + ordinal as u32;
            self.slots.push(Some(Slot {
                file: file.clone(),
                ordinal: ordinal as u32,
            }));
            self.doc_lens.push(c.doc_len);
            self.live += 1;
            self.total_len += u64::from(c.doc_len);
            for (term, tf) in &c.terms {
                // get_mut first: cloning the key only for new terms saves one
                // allocation per posting when loading a large index.
                match self.postings.get_mut(term.as_str()) {
                    Some(p) => {
                        p.df += 1;
                        p.list.push((slot, *tf));
                    }
                    None => {
                        self.postings.insert(
                            term.clone(),
                            Posting {
                                df: 1,
                                list: vec![(slot, *tf)],
                            },
                        );
                    }
                }
            }
            if let Some(s) = &c.symbol {
                if c.kind == ChunkKind::Symbol && !s.kind_label.starts_with("impl") {
                    self.defs.entry(s.name.clone()).or_default().push(slot);
                }
            }
            for name in c.calls.iter().chain(&c.references).chain(&c.documents) {
                self.mentions.entry(name.clone()).or_default().push(slot);
            }
            for imp in &c.imports {
                for cand in &imp.candidates {
                    self.importers.entry(cand.clone()).or_default().push(slot);
                }
            }
        }
        self.files.insert(file, FileEntry { record, first_slot });
    }

    /// Remove a file; returns its record when it was known.
    pub fn remove(&mut self, rel_path: &str) -> Option<FileRecord> {
        let entry = self.files.remove(rel_path)?;
        for (ordinal, c) in entry.record.chunks.iter().enumerate() {
            let slot = entry.first_slot + ordinal as u32;
            if let Some(s) = self.slots.get_mut(slot as usize) {
                *s = None;
            }
            self.live = self.live.saturating_sub(1);
            self.total_len = self.total_len.saturating_sub(u64::from(c.doc_len));
            for (term, _) in &c.terms {
                if let Some(p) = self.postings.get_mut(term) {
                    p.df = p.df.saturating_sub(1);
                }
            }
            // defs / mentions / importers keep the dead slot until compaction;
            // readers skip dead slots, which keeps removal O(terms), not O(list).
        }
        Some(entry.record)
    }

    /// Rebuild from the live records when over half the slots are dead, so
    /// postings of deleted chunks stop costing query time and memory.
    pub fn compact_if_sparse(&mut self) {
        let dead = self.slots.len() as u64 - u64::from(self.live);
        if dead > 1024 && dead > u64::from(self.live) {
            let records: Vec<FileRecord> = self.files.drain().map(|(_, e)| e.record).collect();
            *self = Index::from_records(records);
        }
    }

    /// Number of live chunks containing `term`.
    pub fn df(&self, term: &str) -> u32 {
        self.postings.get(term).map_or(0, |p| p.df)
    }

    /// Live postings of `term`: `(slot, tf, doc_len)`.
    pub fn postings(&self, term: &str) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.postings
            .get(term)
            .map(|p| p.list.as_slice())
            .unwrap_or(&[])
            .iter()
            .filter(|(s, _)| matches!(self.slots.get(*s as usize), Some(Some(_))))
            .map(|&(s, tf)| (s, tf, self.doc_lens[s as usize]))
    }

    fn live_only<'a>(&'a self, list: Option<&'a Vec<u32>>) -> impl Iterator<Item = u32> + 'a {
        list.map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .copied()
            .filter(|&s| matches!(self.slots.get(s as usize), Some(Some(_))))
    }

    /// Live slots defining a bare name.
    pub fn definitions<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.defs.get(name))
    }

    /// Live slots that call, reference or document a bare name.
    pub fn mentions_of<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.mentions.get(name))
    }

    /// Live slots importing a workspace path (by one of their candidates).
    pub fn importers_of<'a>(&'a self, rel_path: &str) -> impl Iterator<Item = u32> + 'a {
        self.live_only(self.importers.get(rel_path))
    }

    /// Total number of slots ever allocated (live or dead).
    pub fn slot_capacity(&self) -> usize {
        self.slots.len()
    }
}
