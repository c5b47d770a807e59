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
use crate::semantic::{embed_region, DigestMap, SemanticIndex};
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
    let mut buffer = vec![0.0f32; dim];
    let mut scratch = String::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let scale = match (
            lines.slice(text, chunk.start_line, chunk.end_line),
            out.components.get_mut(i * dim..(i + 1) * dim),
        ) {
            (Some(region), Some(components)) => embed_region(
                model,
                rel_path,
                &chunk.title,
                region,
                (&mut scratch, &mut buffer, components),
            ),
            _ => 0.0,
        };
        out.scales.push(scale);
    }
    out
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
