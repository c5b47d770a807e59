//! What is remembered per file and per chunk (what the store persists),
//! and how chunker output becomes those records.

use contextgraph_types::Timestamp;

use crate::chunk::{Chunk, ChunkKind, ImportRef, SymbolInfo};
use crate::lang::Language;
use crate::term_counts::term_frequencies_of_parts;
use crate::tokenize::{symbol_tokens, TermCounts};
use crate::walk::SkipReason;

#[cfg(doc)]
use super::Index;

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
    /// The distinct tokens of the symbol's qualified name, lowercased and
    /// separated by spaces (empty without a symbol; see
    /// [`symbol_tokens`](crate::tokenize::symbol_tokens)). Every query
    /// matches up to 2,000 candidates' names against its goal; reading
    /// their tokens here instead of tokenizing each name again was most of
    /// that work (issue 29).
    pub symbol_tokens: String,
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
    pub terms: TermCounts,
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
    build_chunk_records_in(text, &lines, chunks, previous, now, mtime)
}

/// [`build_chunk_records`] with the line index of `text` already built.
pub fn build_chunk_records_in(
    text: &str,
    lines: &crate::chunk::LineIndex,
    chunks: Vec<Chunk>,
    previous: Option<&FileRecord>,
    now: Timestamp,
    mtime: Option<Timestamp>,
) -> Vec<ChunkRecord> {
    let mut out = Vec::with_capacity(chunks.len());
    // Reused from chunk to chunk: the own text's line pieces (slices of
    // `text`, so they outlive each chunk) and the sorted nested spans. A
    // vector of pieces and a copy of the spans per chunk were two of the
    // records' allocations per chunk (issue 29).
    let mut pieces: Vec<&str> = Vec::new();
    let mut nested: Vec<(u32, u32)> = Vec::new();
    for c in chunks {
        let Some(region) = lines.slice(text, c.start_line, c.end_line) else {
            continue;
        };
        let digest = sha256(region.as_bytes());
        own_line_pieces(text, lines, &c, &mut nested, &mut pieces);
        let (terms, doc_len) = term_frequencies_of_parts(&pieces, &own_names(&c));
        let earlier = previous.and_then(|p| {
            p.chunks
                .iter()
                .find(|o| o.local_id == c.local_id && o.digest == digest)
        });
        let (recorded_at, valid_from) = match earlier {
            Some(o) => (o.recorded_at, o.valid_from),
            None => (now, first_valid_from(now, mtime)),
        };
        let symbol_tokens = c
            .symbol
            .as_ref()
            .map_or_else(String::new, |s| symbol_tokens(&s.qualified));
        out.push(ChunkRecord {
            kind: c.kind,
            local_id: c.local_id,
            title: c.title,
            symbol: c.symbol,
            symbol_tokens,
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

/// The chunk's own text in pieces, each ending at a word boundary: its
/// lines minus those of nested chunks, then its qualified name and title (so
/// a query naming a symbol finds it). Tokenized piece by piece, which gives
/// the tokens of [`own_text`] without building it.
#[cfg(any(test, feature = "bench-internals"))]
pub(crate) fn own_text_parts<'t>(
    text: &'t str,
    lines: &crate::chunk::LineIndex,
    c: &'t Chunk,
) -> Vec<&'t str> {
    let mut out = Vec::with_capacity(c.nested.len() + 3);
    own_line_pieces(text, lines, c, &mut Vec::new(), &mut out);
    if let Some(s) = &c.symbol {
        out.push(&s.qualified);
    }
    out.push(&c.title);
    out
}

/// The line pieces of a chunk's own text (`own_text_parts` without the
/// names), into `out` (cleared first); `nested` is a buffer for the
/// sorted nested spans.
fn own_line_pieces<'t>(
    text: &'t str,
    lines: &crate::chunk::LineIndex,
    c: &Chunk,
    nested: &mut Vec<(u32, u32)>,
    out: &mut Vec<&'t str>,
) {
    out.clear();
    nested.clear();
    nested.extend_from_slice(&c.nested);
    nested.sort_unstable();
    let mut line = c.start_line;
    for &(a, b) in nested.iter() {
        if a > line {
            // Lines before a nested chunk end with their newline.
            out.push(lines.slice(text, line, a - 1).unwrap_or(""));
        }
        line = line.max(b + 1);
    }
    if line <= c.end_line {
        out.push(lines.slice(text, line, c.end_line).unwrap_or(""));
    }
}

/// The names that end a chunk's own text: its qualified name, then its
/// title. Without a symbol the first is empty, which adds no token and no
/// byte to the counts (`own_text_parts` leaves it out).
fn own_names(c: &Chunk) -> [&str; 2] {
    let qualified = c.symbol.as_ref().map_or("", |s| s.qualified.as_str());
    [qualified, c.title.as_str()]
}

/// The chunk's own text as one string: [`own_text_parts`] with the lines
/// concatenated and a space before the qualified name and before the title.
#[cfg(any(test, feature = "bench-internals"))]
pub(crate) fn own_text(text: &str, lines: &crate::chunk::LineIndex, c: &Chunk) -> String {
    let parts = own_text_parts(text, lines, c);
    let named = usize::from(c.symbol.is_some()) + 1;
    let (body, names) = parts.split_at(parts.len() - named);
    let mut out = body.concat();
    for n in names {
        out.push(' ');
        out.push_str(n);
    }
    out
}

/// SHA-256 of bytes, raw.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

/// When a chunk first seen `now` became valid: the file's modification
/// time when it is plausible (not in the future), else `now`.
pub(crate) fn first_valid_from(now: Timestamp, mtime: Option<Timestamp>) -> Timestamp {
    mtime.filter(|m| *m <= now).unwrap_or(now)
}
