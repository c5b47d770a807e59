//! The embedding pass of a cold build, done by the workers that read and
//! chunk the files instead of after them.
//!
//! A cold build (an empty index built from the files) used to embed every
//! chunk in a pass of its own once the index was saved: every file read
//! again from disk, its line index rebuilt, every region hashed again to
//! check it against its digest, and the pass's last window finishing on
//! one thread while the other cores idled. Here each worker embeds a
//! file's chunks right after chunking it, from the text it holds
//! ([`embed_file`]), so the embedding is spread over the same workers as
//! the parse, with nothing left to wait for at the end. The vectors go
//! with the file's record to the thread that applies records in work
//! order, which lays them out by slot ([`ColdVectors::push_file`]) with
//! the rule [`SemanticIndex::update`] applies in slot order: the first
//! slot of a content (digest) with a vector gives it to every later slot
//! of that content. What each slot gets is therefore what that one-thread
//! loop computes on the built index, whatever thread embedded which file
//! (`semantic_parallel_tests.rs` checks both, byte for byte).
//!
//! A record that comes without vectors (its worker's embedding panicked)
//! makes the whole result incomplete: the rows are dropped and the usual
//! pass after the build embeds everything, as before.

use contextgraph_embed::StaticModel;

use crate::chunk::LineIndex;
use crate::index::{ChunkRecord, Index};
#[cfg(doc)]
use crate::semantic::embed_region;
use crate::semantic::{DigestMap, SemanticIndex};
use crate::semantic_rows::Rows;

/// One file's chunk vectors, in chunk order: a scale per chunk (0: no
/// vector) and `dim` int8 components per chunk (zeros when none).
#[derive(Debug, Default)]
pub(crate) struct FileVectors {
    scales: Vec<f32>,
    components: Vec<u8>,
}

/// Embeds each of `chunks` (the records just built from `text`, the whole
/// file) as [`SemanticIndex::update`] embeds a chunk: its path, title and
/// region. The regions are cut from `text` with the line index their
/// digests were computed with (`lines`, `index/records.rs`), so they are the bytes
/// the digests describe: the check the later pass makes against a file
/// read again from disk holds by construction here and is not repeated.
///
/// The text is tokenized once ([`FileTokens`]), not once per chunk: a
/// chunk's region holds its nested chunks' regions (a method's lines are
/// in its `impl`'s too), and every chunk starts with the same path. The
/// path's sum is computed once and each chunk starts from a copy; the
/// region's known tokens are a run of the file's. The vector of each
/// chunk is what [`embed_region`] computes from the concatenated text,
/// bit for bit: the same additions in the same order
/// (`semantic_cold_tests.rs`).
pub(crate) fn embed_file(
    model: &StaticModel,
    rel_path: &str,
    text: &str,
    lines: &LineIndex,
    chunks: &[ChunkRecord],
) -> FileVectors {
    let dim = model.dim();
    let mut out = FileVectors {
        scales: Vec::with_capacity(chunks.len()),
        components: vec![0u8; chunks.len() * dim],
    };
    if chunks.is_empty() {
        return out;
    }
    let tokens = FileTokens::new(model, text, lines);
    let mut path_sum = vec![0.0f32; dim];
    // `embed_region` joins path, title and region with newlines: token
    // boundaries, so each part adds what it adds alone.
    model.add_text(rel_path, &mut path_sum);
    let mut buffer = vec![0.0f32; dim];
    for (i, chunk) in chunks.iter().enumerate() {
        let scale = match (
            tokens.rows(chunk.start_line, chunk.end_line),
            out.components.get_mut(i * dim..(i + 1) * dim),
        ) {
            (Some(rows), Some(components)) => {
                buffer.copy_from_slice(&path_sum);
                model.add_text(&chunk.title, &mut buffer);
                model.add_rows(rows, &mut buffer);
                if StaticModel::finish_sum(&mut buffer) {
                    crate::vectors_file::quantize(&buffer, components)
                } else {
                    0.0
                }
            }
            _ => 0.0,
        };
        out.scales.push(scale);
    }
    out
}

/// The known tokens of a file's text, in order, and where each line's
/// start in them: the tokens of lines `a..=b` are one run. A token never
/// spans a newline, so the tokens that start in a run of whole lines are
/// exactly those the run alone tokenizes to.
struct FileTokens<'l> {
    /// Vocabulary rows of the known tokens, in text order.
    rows: Vec<u32>,
    /// Per line (0-based), the index in `rows` of its first token; one
    /// more entry, `rows.len()`, after the last line.
    line_first: Vec<u32>,
    lines: &'l LineIndex,
}

/// Bytes of [`FileTokens`] buffers a thread keeps for its next file at
/// most (each of the two): the tokens of a file of about 1 MB.
const TOKEN_BUFFERS_KEPT: usize = 512 << 10;

thread_local! {
    /// The last [`FileTokens`]' buffers, emptied, for the thread's next
    /// file: fresh ones were two large allocations of cold memory per
    /// file of a cold build (issue 29).
    static SPARE_TOKENS: std::cell::Cell<(Vec<u32>, Vec<u32>)> =
        const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}

/// Bytes of the spare [`FileTokens`] buffers the thread keeps (tests).
#[cfg(test)]
pub(crate) fn spare_token_bytes() -> usize {
    let (rows, line_first) = SPARE_TOKENS.take();
    let bytes = (rows.capacity() + line_first.capacity()) * std::mem::size_of::<u32>();
    SPARE_TOKENS.set((rows, line_first));
    bytes
}

impl Drop for FileTokens<'_> {
    fn drop(&mut self) {
        let kept = |v: &mut Vec<u32>| {
            let mut v = std::mem::take(v);
            v.clear();
            if v.capacity() * std::mem::size_of::<u32>() > TOKEN_BUFFERS_KEPT {
                v = Vec::new();
            }
            v
        };
        let spare = (kept(&mut self.rows), kept(&mut self.line_first));
        // `try_with`: a drop while the thread's locals are being destroyed
        // (none in practice) frees the buffers instead of panicking.
        let _ = SPARE_TOKENS.try_with(|s| s.set(spare));
    }
}

impl<'l> FileTokens<'l> {
    fn new(model: &StaticModel, text: &str, lines: &'l LineIndex) -> FileTokens<'l> {
        let count = lines.line_count();
        // A nested use finds the spare taken and starts from nothing.
        let (mut rows, mut line_first) = SPARE_TOKENS.take();
        rows.clear();
        rows.reserve(text.len() / 8);
        line_first.clear();
        line_first.reserve(count as usize + 1);
        // The next line whose first token is not yet recorded (0-based)
        // and where it starts.
        let mut next = 0u32;
        let mut next_start = lines.byte_range(1, 1).map_or(usize::MAX, |r| r.start);
        model.for_each_known_token(text, |row, at| {
            while at >= next_start {
                line_first.push(rows.len() as u32);
                next += 1;
                next_start = if next < count {
                    lines
                        .byte_range(next + 1, next + 1)
                        .map_or(usize::MAX, |r| r.start)
                } else {
                    usize::MAX
                };
            }
            rows.push(row);
        });
        line_first.resize(count as usize + 1, rows.len() as u32);
        FileTokens {
            rows,
            line_first,
            lines,
        }
    }

    /// The known tokens of lines `start..=end` (1-based), or `None` when
    /// [`LineIndex::slice`] has no text for them.
    fn rows(&self, start: u32, end: u32) -> Option<&[u32]> {
        self.lines.byte_range(start, end)?;
        let a = *self.line_first.get(start as usize - 1)? as usize;
        let b = *self.line_first.get(end as usize)? as usize;
        self.rows.get(a..b)
    }
}

/// The rows of a cold build, laid out slot by slot as the records are
/// applied (see the module docs).
pub(crate) struct ColdVectors {
    semantic: SemanticIndex,
    rows: Rows,
    /// Digest → the first slot with that content and a vector.
    known: DigestMap<u32>,
    /// Slots with a vector.
    live_rows: usize,
    /// A file came without its vectors: the rows are not used.
    incomplete: bool,
}

impl ColdVectors {
    /// No rows yet, for vectors of `model`.
    pub(crate) fn new(model: &StaticModel) -> ColdVectors {
        ColdVectors {
            semantic: SemanticIndex::new(model),
            rows: Rows::new(model.dim()),
            known: DigestMap::default(),
            live_rows: 0,
            incomplete: false,
        }
    }

    /// The rows of the next file applied to the index: `chunks` get the
    /// next slots, in order, with `vectors` computed for them by
    /// [`embed_file`] (`None`: not computed).
    pub(crate) fn push_file(&mut self, chunks: &[ChunkRecord], vectors: Option<&FileVectors>) {
        if chunks.is_empty() || self.incomplete {
            return;
        }
        let dim = self.semantic.dim();
        let Some(vectors) = vectors
            .filter(|v| v.scales.len() == chunks.len() && v.components.len() == chunks.len() * dim)
        else {
            self.incomplete = true;
            return;
        };
        let mut copied = vec![0u8; dim];
        for (i, chunk) in chunks.iter().enumerate() {
            let slot = self.rows.len() as u32;
            // An earlier slot of the same content: its vector, as the
            // one-thread pass gives it.
            if let Some((scale, q, _)) = self
                .known
                .get(&chunk.digest)
                .and_then(|&s| self.rows.get(s as usize))
            {
                copied.copy_from_slice(q);
                self.rows.push(Some((scale, &copied, &chunk.digest)));
                self.live_rows += 1;
                continue;
            }
            let scale = vectors.scales[i];
            let own = &vectors.components[i * dim..(i + 1) * dim];
            if scale > 0.0 {
                self.rows.push(Some((scale, own, &chunk.digest)));
                self.known.insert(chunk.digest, slot);
                self.live_rows += 1;
            } else {
                self.rows.push(None);
            }
        }
    }

    /// The vectors of `index`, when every one of its slots is the slot
    /// pushed at that position (nothing incomplete, nothing renumbered:
    /// the index built as the records were pushed, under `layout`).
    pub(crate) fn finish(self, index: &Index, layout: u64) -> Option<SemanticIndex> {
        let aligned = !self.incomplete
            && index.layout_id() == layout
            && self.rows.len() == index.slot_capacity()
            && index.chunk_count() == index.slot_capacity();
        aligned.then(|| {
            self.semantic
                .with_rows(self.rows, index.layout_id(), self.live_rows)
        })
    }
}

#[cfg(test)]
#[path = "semantic_cold_tests.rs"]
mod tests;
