//! The offline semantic signal: one static-embedding vector per indexed
//! chunk, and cosine scores of a goal against them.
//!
//! Lexical ranking misses goals that say in prose what the code says in
//! identifiers ("how many times do we retry" vs `max_attempts`, `backoff`).
//! A static model ([`contextgraph_embed`]) maps both to vectors in
//! microseconds, so every chunk can be embedded when it is indexed and every
//! query scored against all of them.
//!
//! Vectors are keyed by the chunk's content digest (the SHA-256 the index
//! already records for each chunk), not by slot: slots are renumbered when
//! the index compacts, while a digest names the same bytes forever. So an
//! [`SemanticIndex::update`] after a refresh embeds only chunks whose
//! content is new, and identical chunks share one vector. Before embedding,
//! the region read from disk is checked against the recorded digest; a file
//! edited since it was indexed is skipped until the next refresh, so a
//! vector never describes other bytes than its key says.
//!
//! This module computes and serves the signal; how much it weighs against
//! BM25 and the other signals is the ranking layer's decision.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use contextgraph_embed::{ModelError, StaticModel};

use crate::chunk::LineIndex;
use crate::index::{sha256, Index};
use crate::search::SearchView;
use crate::workspace::Workspace;

/// Hashes a SHA-256 digest by its first eight bytes: they are already
/// uniformly distributed, so running SipHash over all 32 (the default) only
/// costs time on every lookup.
#[derive(Debug, Default, Clone, Copy)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // `[u8; 32]` hashes as a length prefix (via `write_usize`) and one
        // `write` of its bytes; other keys never reach this map.
        for (i, &b) in bytes.iter().take(8).enumerate() {
            self.0 ^= u64::from(b) << (8 * i);
        }
    }

    fn write_usize(&mut self, _len: usize) {}
}

type DigestMap<V> = HashMap<[u8; 32], V, BuildHasherDefault<DigestHasher>>;

/// A digest of which content sits in which slot: changes when a refresh
/// edits, adds or removes a chunk, or compaction renumbers slots, even when
/// the number of chunks stays the same. One pass over the slots (the first
/// eight bytes of each digest, mixed with the slot number), far cheaper
/// than the scoring pass that follows it.
fn layout_signature(index: &Index) -> u64 {
    let mut sig = index.slot_capacity() as u64;
    for slot in 0..index.slot_capacity() as u32 {
        if let Some((_, chunk)) = index.chunk(slot) {
            let mut head = [0u8; 8];
            head.copy_from_slice(&chunk.digest[..8]);
            let mixed =
                u64::from_le_bytes(head) ^ u64::from(slot).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            sig = sig.rotate_left(5) ^ mixed.wrapping_mul(0xff51_afd7_ed55_8ccd);
        }
    }
    sig
}

/// Share of a chunk's semantic score that comes from its whole file when the
/// goal is a question (`RerankSignals::semantic_files`): the cosine of the
/// goal with the file's vector (the normalised sum of its chunks' vectors)
/// blended with the chunk's own. "How does X work" asks about a file or a
/// part of the design, not one function, and a file about X throughout is a
/// better answer than a lone chunk that happens to share X's words. On the
/// retrieval benchmark's tuning half: 0.3 / 0.5 / 0.7 gave 0.866 / 0.867 /
/// 0.865 NDCG@10 against 0.864 (architecture 0.764 → 0.772 at 0.5);
/// held-out, checked once, 0.850 → 0.852 (architecture 0.769 → 0.775).
/// For every goal, not only questions, 0.5 gained nothing (0.864: semantic
/// lookups of one function lost what architecture goals gained).
pub const QUESTION_FILE_SHARE: f32 = 0.5;

/// No row for this slot.
const NO_ROW: u32 = u32::MAX;

/// Chunk vectors computed with one model.
#[derive(Debug, Clone)]
pub struct SemanticIndex {
    dim: usize,
    fingerprint: String,
    /// Content digest → row in `vectors`.
    rows: DigestMap<u32>,
    /// Each row's digest (the inverse of `rows`).
    row_digests: Vec<[u8; 32]>,
    /// Slot → row as of the last update: a shortcut past the digest lookup,
    /// trusted only when the slot's chunk still has that row's digest (the
    /// index may have been refreshed or compacted since).
    slot_rows: Vec<u32>,
    /// Unit-length vectors, `dim` values per row.
    vectors: Vec<f32>,
    /// [`layout_signature`] of the index at the last update.
    generation: Option<u64>,
}

/// What an [`SemanticIndex::update`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SemanticUpdate {
    /// Chunks embedded now (new content).
    pub embedded: usize,
    /// Chunks whose vector was already known.
    pub reused: usize,
    /// Chunks without a vector: no known token, or a file that changed
    /// since it was indexed or could not be read.
    pub skipped: usize,
    /// Rows of the previous vectors carried over (distinct contents).
    pub reused_rows: usize,
    /// Rows of the previous vectors dropped: their content is no longer
    /// indexed.
    pub dropped: usize,
}

impl SemanticUpdate {
    /// Whether the vectors differ from before the update (worth writing).
    pub fn changed(&self) -> bool {
        self.embedded > 0 || self.dropped > 0
    }
}

impl SemanticIndex {
    /// An empty index for vectors of `model`.
    pub fn new(model: &StaticModel) -> Self {
        Self {
            dim: model.dim(),
            fingerprint: model.fingerprint().to_string(),
            rows: DigestMap::default(),
            row_digests: Vec::new(),
            slot_rows: Vec::new(),
            vectors: Vec::new(),
            generation: None,
        }
    }

    /// The vector length.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The fingerprint of the model the vectors were computed with.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Number of distinct chunk contents with a vector.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no chunk has a vector.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Each distinct content digest with its vector, in row order.
    pub fn rows(&self) -> impl Iterator<Item = (&[u8; 32], &[f32])> {
        self.row_digests
            .iter()
            .zip(self.vectors.chunks_exact(self.dim.max(1)))
    }

    /// Vectors read back from storage ([`crate::vectors_file`]): one row per
    /// digest, `model.dim()` values each. Fails on a length mismatch or a
    /// repeated digest.
    pub fn from_rows(
        model: &StaticModel,
        digests: Vec<[u8; 32]>,
        vectors: Vec<f32>,
    ) -> Result<Self, &'static str> {
        let dim = model.dim();
        if dim == 0 || vectors.len() != digests.len() * dim {
            return Err("vector data does not match the row count");
        }
        let mut rows = DigestMap::default();
        rows.reserve(digests.len());
        for (i, d) in digests.iter().enumerate() {
            if rows.insert(*d, i as u32).is_some() {
                return Err("a content digest appears twice");
            }
        }
        Ok(Self {
            dim,
            fingerprint: model.fingerprint().to_string(),
            rows,
            row_digests: digests,
            slot_rows: Vec::new(),
            vectors,
            generation: None,
        })
    }

    /// Whether the vectors were last brought in line with exactly this
    /// index: the same chunk content in the same slots (see
    /// `layout_signature`). When it says no, [`update`](Self::update)
    /// embeds what is new.
    pub fn covers(&self, index: &Index) -> bool {
        self.generation == Some(layout_signature(index))
    }

    /// Brings the vectors in line with the workspace's current index:
    /// embeds chunks with new content, keeps known ones, and drops vectors
    /// of content no longer indexed. `model` must be the one this index was
    /// created with.
    pub fn update(
        &mut self,
        workspace: &Workspace,
        model: &StaticModel,
    ) -> Result<SemanticUpdate, ModelError> {
        model.check_compatible(self.dim, &self.fingerprint)?;
        let view = workspace.view();
        let index = view.index();
        let mut report = SemanticUpdate::default();
        let mut rows = DigestMap::default();
        rows.reserve(index.chunk_count());
        let mut row_digests = Vec::with_capacity(index.chunk_count());
        let mut slot_rows = vec![NO_ROW; index.slot_capacity()];
        let mut vectors = Vec::with_capacity(index.chunk_count() * self.dim);
        let mut buffer = vec![0.0f32; self.dim];
        let mut text = String::new();
        // One file's text and line index, kept while its chunks are visited
        // (a file's slots are consecutive).
        let mut current: Option<(String, Option<(String, LineIndex)>)> = None;
        for slot in 0..index.slot_capacity() as u32 {
            let Some((rel_path, chunk)) = index.chunk(slot) else {
                continue;
            };
            if let Some(&row) = rows.get(&chunk.digest) {
                slot_rows[slot as usize] = row;
                report.reused += 1;
                continue;
            }
            if let Some(&old) = self.rows.get(&chunk.digest) {
                let start = old as usize * self.dim;
                let row = row_digests.len() as u32;
                rows.insert(chunk.digest, row);
                row_digests.push(chunk.digest);
                slot_rows[slot as usize] = row;
                vectors.extend_from_slice(&self.vectors[start..start + self.dim]);
                report.reused += 1;
                report.reused_rows += 1;
                continue;
            }
            if current.as_ref().is_none_or(|(path, _)| path != rel_path) {
                let loaded = std::fs::read(workspace.root().join(rel_path))
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .map(|t| {
                        let lines = LineIndex::new(&t);
                        (t, lines)
                    });
                current = Some((rel_path.to_string(), loaded));
            }
            let region = current
                .as_ref()
                .and_then(|(_, loaded)| loaded.as_ref())
                .and_then(|(t, lines)| lines.slice(t, chunk.start_line, chunk.end_line));
            let Some(region) = region.filter(|r| sha256(r.as_bytes()) == chunk.digest) else {
                report.skipped += 1;
                continue;
            };
            // The path and title carry words the body may lack (`retry.rs`,
            // `impl Backoff`).
            text.clear();
            text.push_str(rel_path);
            text.push('\n');
            text.push_str(&chunk.title);
            text.push('\n');
            text.push_str(region);
            if !model.encode_into(&text, &mut buffer) {
                report.skipped += 1;
                continue;
            }
            // As stored on disk, so a reloaded index scores identically.
            crate::vectors_file::quantize_in_place(&mut buffer);
            let row = row_digests.len() as u32;
            rows.insert(chunk.digest, row);
            row_digests.push(chunk.digest);
            slot_rows[slot as usize] = row;
            vectors.extend_from_slice(&buffer);
            report.embedded += 1;
        }
        report.dropped = self.row_digests.len().saturating_sub(report.reused_rows);
        self.rows = rows;
        self.row_digests = row_digests;
        self.slot_rows = slot_rows;
        self.vectors = vectors;
        self.generation = Some(layout_signature(index));
        Ok(report)
    }

    /// Cosine similarity of `goal` with every live chunk that has a vector,
    /// as `(slot, score)`, best first; empty when the goal has no word the
    /// model knows. Fails when `model` is not the one the vectors were
    /// computed with.
    pub fn semantic_scores(
        &self,
        view: &SearchView<'_>,
        model: &StaticModel,
        goal: &str,
    ) -> Result<Vec<(u32, f32)>, ModelError> {
        self.semantic_scores_with_files(view, model, goal, 0.0)
    }

    /// [`semantic_scores`](Self::semantic_scores), each chunk's cosine
    /// blended with its file's: `(1 - file_share) · cos(goal, chunk) +
    /// file_share · cos(goal, file)`, where the file's vector is the sum of
    /// its chunks' vectors (a file's slots are consecutive, so one pass
    /// computes both). `file_share` is clamped to [0, 1]; 0 is the plain
    /// chunk score.
    pub fn semantic_scores_with_files(
        &self,
        view: &SearchView<'_>,
        model: &StaticModel,
        goal: &str,
        file_share: f32,
    ) -> Result<Vec<(u32, f32)>, ModelError> {
        model.check_compatible(self.dim, &self.fingerprint)?;
        let Some(query) = model.encode(goal) else {
            return Ok(Vec::new());
        };
        let query = query.as_slice();
        let file_share = file_share.clamp(0.0, 1.0);
        let index = view.index();
        let mut scores: Vec<(u32, f32)> = Vec::with_capacity(index.chunk_count());
        // The file being summed: its path, its first entry in `scores`, and
        // the sum of its chunks' vectors.
        let mut file: Option<&str> = None;
        let mut file_start = 0usize;
        let mut file_sum = vec![0.0f32; self.dim];
        let blend = |scores: &mut [(u32, f32)], sum: &mut [f32]| {
            let norm = contextgraph_embed::dot(sum, sum).sqrt();
            if file_share > 0.0 && norm > 0.0 {
                let file_cosine = contextgraph_embed::dot(query, sum) / norm;
                for s in scores.iter_mut() {
                    s.1 = (1.0 - file_share) * s.1 + file_share * file_cosine;
                }
            }
            sum.iter_mut().for_each(|x| *x = 0.0);
        };
        for slot in 0..index.slot_capacity() as u32 {
            let Some((path, chunk)) = index.chunk(slot) else {
                continue;
            };
            let row = match self.slot_rows.get(slot as usize) {
                Some(&row) if self.row_digests.get(row as usize) == Some(&chunk.digest) => row,
                _ => match self.rows.get(&chunk.digest) {
                    Some(&row) => row,
                    None => continue,
                },
            } as usize
                * self.dim;
            let v = &self.vectors[row..row + self.dim];
            if file != Some(path) {
                blend(&mut scores[file_start..], &mut file_sum);
                file = Some(path);
                file_start = scores.len();
            }
            if file_share > 0.0 {
                file_sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
            }
            scores.push((slot, contextgraph_embed::dot(query, v)));
        }
        blend(&mut scores[file_start..], &mut file_sum);
        scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(scores)
    }
}

impl Workspace {
    /// Where this workspace's chunk vectors persist: beside the index in
    /// its cache directory (none when persistence is disabled).
    pub fn vectors_path(&self) -> Option<std::path::PathBuf> {
        self.shared
            .store
            .as_ref()
            .map(|s| s.dir().join(crate::vectors_file::VECTORS_FILE))
    }

    /// Whether the semantic signal runs for this workspace: switched on,
    /// and the index within [`WorkspaceOptions::semantic_max_chunks`].
    ///
    /// [`WorkspaceOptions::semantic_max_chunks`]: crate::WorkspaceOptions::semantic_max_chunks
    pub fn semantic_in_use(&self) -> bool {
        let options = &self.shared.options;
        options.semantic && self.view().index().chunk_count() <= options.semantic_max_chunks
    }

    /// Brings the chunk vectors in line with the index now: loads them from
    /// the vectors file when it is there and trustworthy, embeds the chunks
    /// it lacks, and rewrites it when anything changed. Called when the
    /// workspace opens with the semantic signal on (so the cost is paid at
    /// index time, not by the first query) and before scoring a goal.
    /// A no-op when the signal is off.
    pub fn prepare_semantic(&self) -> Result<SemanticPrepare, SemanticError> {
        if !self.semantic_in_use() {
            return Ok(SemanticPrepare::default());
        }
        let model = contextgraph_embed::builtin().map_err(SemanticError::Model)?;
        let mut guard = self
            .shared
            .semantic
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let covered = guard
            .as_ref()
            .is_some_and(|s| s.covers(self.view().index()));
        if covered {
            return Ok(SemanticPrepare::default());
        }
        let path = self.vectors_path();
        let mut out = SemanticPrepare::default();
        let mut index = match guard.take() {
            Some(index) => index,
            None => match path.as_deref().map(|p| crate::vectors_file::read(p, model)) {
                Some(Ok(Some(loaded))) => {
                    out.loaded = true;
                    loaded
                }
                Some(Err(e)) => {
                    out.rejected = Some(e.to_string());
                    SemanticIndex::new(model)
                }
                Some(Ok(None)) | None => SemanticIndex::new(model),
            },
        };
        out.update = index.update(self, model).map_err(SemanticError::Model)?;
        let write = out.update.changed() || out.rejected.is_some() || !out.loaded;
        *guard = Some(index);
        if let (true, Some(path), Some(index)) = (write, path, guard.as_ref()) {
            crate::vectors_file::write(&path, index).map_err(SemanticError::File)?;
            out.written = true;
        }
        Ok(out)
    }

    /// Semantic scores of `goal` against every chunk, best first, from the
    /// built-in model (see [`Workspace::prepare_semantic`] for where the
    /// chunk vectors come from). Empty when the semantic signal is off, the
    /// model cannot be loaded, or the goal has no word the model knows. A
    /// question's scores blend in each chunk's whole file
    /// ([`QUESTION_FILE_SHARE`]) unless `RerankSignals::semantic_files` is
    /// off.
    pub fn semantic_scores(&self, goal: &str) -> Vec<(u32, f32)> {
        if !self.semantic_in_use() {
            return Vec::new();
        }
        let Ok(model) = contextgraph_embed::builtin() else {
            return Vec::new();
        };
        // A vectors file that cannot be written still leaves the vectors
        // in memory: scoring goes on.
        let _ = self.prepare_semantic();
        let Ok(guard) = self.shared.semantic.lock() else {
            return Vec::new();
        };
        let Some(index) = guard.as_ref() else {
            return Vec::new();
        };
        let view = self.view();
        let file_share = if self.shared.options.rank_signals.semantic_files
            && crate::rerank::QueryShape::of(goal).question
        {
            QUESTION_FILE_SHARE
        } else {
            0.0
        };
        index
            .semantic_scores_with_files(&view, model, goal, file_share)
            .unwrap_or_default()
    }
}

/// What [`Workspace::prepare_semantic`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SemanticPrepare {
    /// The vectors came from the vectors file.
    pub loaded: bool,
    /// The vectors file was there but not used, and why (it was rebuilt).
    pub rejected: Option<String>,
    /// What bringing the vectors in line with the index did.
    pub update: SemanticUpdate,
    /// The vectors file was (re)written.
    pub written: bool,
}

/// Why the chunk vectors could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SemanticError {
    /// The model could not be loaded or is not the vectors' model.
    #[error("semantic signal: {0}")]
    Model(ModelError),
    /// The vectors were computed but the vectors file could not be written
    /// (they are served from memory).
    #[error("semantic signal: {0}")]
    File(crate::vectors_file::VectorsFileError),
}
