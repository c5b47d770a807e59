//! The offline semantic signal: one static-embedding vector per indexed
//! chunk, and cosine scores of a goal against them.
//!
//! Lexical ranking misses goals that say in prose what the code says in
//! identifiers ("how many times do we retry" vs `max_attempts`, `backoff`).
//! A static model ([`contextgraph_embed`]) maps both to vectors in
//! microseconds, so every chunk can be embedded when it is indexed and every
//! query scored against all of them.
//!
//! Vectors are held per slot (`semantic_rows.rs`): slot `s`'s vector is row
//! `s`, so neither a load nor a query looks a chunk's content up to find
//! its vector. That stays right because slots are append-only within one
//! numbering of the index ([`Index::layout_id`]): an edit tombstones the
//! file's slots and appends new ones, so [`SemanticIndex::update`] only
//! fills the slots appended since it last ran. When the index is renumbered
//! (a compaction, another process's snapshot), the vectors are carried over
//! by content digest (the SHA-256 the index records for each chunk) and
//! only content never seen is embedded; the same lookup finds the vectors
//! of an edited file's unchanged chunks among its tombstoned slots. Before
//! embedding, the region read from disk is checked against the recorded
//! digest; a file edited since it was indexed is skipped until the next
//! refresh, so a vector never describes other bytes than its slot holds.
//!
//! This module computes and serves the signal; how much it weighs against
//! BM25 and the other signals is the ranking layer's decision.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use contextgraph_embed::{ModelError, StaticModel};

use crate::chunk::LineIndex;
use crate::index::{sha256, ChunkRecord, Index};
use crate::search::SearchView;
use crate::semantic_rows::{Query, Rows};
use crate::vectors_file::{AlignedRows, KeyedRows, RowRef};
use crate::workspace::Workspace;

pub use crate::semantic_workspace::{SemanticError, SemanticPrepare, SEMANTIC_SERVED};

/// Hashes a SHA-256 digest by its first eight bytes: they are already
/// uniformly distributed, so running SipHash over all 32 (the default) only
/// costs time on every lookup.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct DigestHasher(u64);

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

pub(crate) type DigestMap<V> = HashMap<[u8; 32], V, BuildHasherDefault<DigestHasher>>;

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

/// Vectors from elsewhere than the current numbering of the slots, found by
/// content digest during the next update and then dropped.
#[derive(Debug, Clone)]
enum Carried {
    /// A vectors file written for another snapshot.
    Aligned(Arc<AlignedRows>),
    /// The tail file (chunks indexed after the snapshot).
    Keyed(Arc<KeyedRows>),
    /// This index's rows before the index was renumbered.
    Rows(Rows),
}

impl Carried {
    fn len(&self) -> usize {
        match self {
            Carried::Aligned(a) => a.len(),
            Carried::Keyed(k) => k.len(),
            Carried::Rows(r) => r.len(),
        }
    }

    fn get(&self, i: usize, dim: usize) -> Option<RowRef<'_>> {
        match self {
            Carried::Aligned(a) => {
                let scale = a.scale(i);
                (scale > 0.0).then_some((scale, a.components(i), a.digest(i)?))
            }
            Carried::Keyed(k) => {
                let (digest, scale) = k.heads.get(i)?;
                let q = k.components.get(i * dim..(i + 1) * dim)?;
                (*scale > 0.0).then_some((*scale, q, digest))
            }
            Carried::Rows(r) => r.get(i),
        }
    }
}

/// Chunk vectors computed with one model, one row per slot of the index.
#[derive(Debug, Clone)]
pub struct SemanticIndex {
    dim: usize,
    fingerprint: String,
    rows: Rows,
    /// The [`Index::layout_id`] the rows are numbered by.
    layout: Option<u64>,
    /// Live slots with a vector at the last update (for vectors read from
    /// a file, every row with a vector).
    live_rows: usize,
    /// Dead slots with a vector at the last update.
    dead_rows: usize,
    carried: Vec<Carried>,
    /// The snapshot whose aligned vectors file holds these rows (read from
    /// it, or written for it): it need not be written again.
    pub(crate) saved_for: Option<[u8; 32]>,
    /// The rows were laid out by a cold build's workers
    /// (`semantic_cold.rs`), not by [`SemanticIndex::update`]: which of
    /// the two paths ran, for the tests that hold them to the same bytes.
    pub(crate) by_workers: bool,
}

/// What an [`SemanticIndex::update`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SemanticUpdate {
    /// Chunks embedded now (new content).
    pub embedded: usize,
    /// Chunks whose vector was already known (kept in their slot, or
    /// found by content).
    pub reused: usize,
    /// Chunks without a vector: no known token, or a file that changed
    /// since it was indexed or could not be read.
    pub skipped: usize,
    /// Chunks given a vector found by content: an unchanged chunk of an
    /// edited file, or a vector of another numbering of the index.
    pub reused_rows: usize,
    /// Vectors no live chunk uses any more: their content was edited away
    /// or removed.
    pub dropped: usize,
}

impl SemanticUpdate {
    /// Whether the vectors differ from before the update (worth writing).
    pub fn changed(&self) -> bool {
        self.embedded > 0 || self.reused_rows > 0 || self.dropped > 0
    }
}

impl SemanticIndex {
    /// An empty index for vectors of `model`.
    pub fn new(model: &StaticModel) -> Self {
        Self {
            dim: model.dim(),
            fingerprint: model.fingerprint().to_string(),
            rows: Rows::new(model.dim()),
            layout: None,
            live_rows: 0,
            dead_rows: 0,
            carried: Vec::new(),
            saved_for: None,
            by_workers: false,
        }
    }

    /// Vectors read back from storage ([`crate::vectors_file`]) for
    /// `index`: the aligned rows are used in place when they were written
    /// for the snapshot `index` was loaded from (the same id and slot
    /// count), else carried over by content; the tail's are carried over
    /// by content.
    pub fn from_saved(
        model: &StaticModel,
        index: &Index,
        aligned: Option<AlignedRows>,
        tail: Option<KeyedRows>,
    ) -> Self {
        let mut out = SemanticIndex::new(model);
        if let Some(aligned) = aligned {
            let bound =
                index.saved_snapshot() == Some((aligned.snapshot_id(), aligned.len() as u32));
            let aligned = Arc::new(aligned);
            if bound {
                out.live_rows = (0..aligned.len())
                    .filter(|&i| aligned.scale(i) > 0.0)
                    .count();
                out.saved_for = Some(aligned.snapshot_id());
                out.rows = Rows::on(aligned, out.dim);
                out.layout = Some(index.layout_id());
            } else {
                out.carried.push(Carried::Aligned(aligned));
            }
        }
        if let Some(tail) = tail.filter(|t| !t.is_empty()) {
            out.carried.push(Carried::Keyed(Arc::new(tail)));
        }
        out
    }

    /// This (empty) index holding `rows`, numbered by `layout`, of which
    /// `live_rows` have a vector: the rows a cold build laid out
    /// (`semantic_cold.rs`).
    pub(crate) fn with_rows(mut self, rows: Rows, layout: u64, live_rows: usize) -> Self {
        self.rows = rows;
        self.layout = Some(layout);
        self.live_rows = live_rows;
        self.dead_rows = 0;
        self.by_workers = true;
        self
    }

    /// The vector length.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The fingerprint of the model the vectors were computed with.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Number of live chunks with a vector as of the last update.
    pub fn len(&self) -> usize {
        self.live_rows
    }

    /// Whether no chunk has a vector.
    pub fn is_empty(&self) -> bool {
        self.live_rows == 0
    }

    /// Whether the rows are read in place from an aligned vectors file.
    pub fn is_mapped(&self) -> bool {
        self.rows.base().is_some()
    }

    /// Slot `slot`'s vector as stored (dequantised), when it has one in
    /// the numbering of `index`.
    pub fn vector(&self, index: &Index, slot: u32) -> Option<Vec<f32>> {
        if self.layout != Some(index.layout_id()) || !index.is_live(slot) {
            return None;
        }
        let (scale, q, _) = self.rows.get(slot as usize)?;
        Some(q.iter().map(|&x| f32::from(x as i8) * scale).collect())
    }

    /// Slot `slot`'s row (scale, components, digest), when it has one.
    pub(crate) fn row(&self, slot: usize) -> Option<RowRef<'_>> {
        self.rows.get(slot)
    }

    /// The index numbering the rows follow.
    pub(crate) fn layout(&self) -> Option<u64> {
        self.layout
    }

    /// Whether every slot of `index` has its row (with a vector or
    /// without): then [`update`](Self::update) has nothing to do. Two
    /// comparisons, however large the index.
    pub fn covers(&self, index: &Index) -> bool {
        self.layout == Some(index.layout_id()) && self.rows.len() == index.slot_capacity()
    }

    /// Brings the vectors in line with the workspace's current index: fills
    /// the slots appended since the last update (found by content among
    /// carried and tombstoned vectors, else embedded); when the index was
    /// renumbered, every slot. `model` must be the one this index was
    /// created with.
    pub fn update(
        &mut self,
        workspace: &Workspace,
        model: &StaticModel,
    ) -> Result<SemanticUpdate, ModelError> {
        model.check_compatible(self.dim, &self.fingerprint)?;
        let view = workspace.view();
        let index = view.index();
        let capacity = index.slot_capacity();
        if self.layout != Some(index.layout_id()) || self.rows.len() > capacity {
            let old = std::mem::replace(&mut self.rows, Rows::new(self.dim));
            if old.len() > 0 {
                self.carried.push(Carried::Rows(old));
            }
            self.layout = Some(index.layout_id());
        }
        // Vectors in use before: the live ones, or, for vectors only read
        // from a file, every one it holds.
        let previous = if self.live_rows > 0 || self.rows.len() > 0 {
            self.live_rows
        } else {
            self.carried
                .iter()
                .map(|c| {
                    (0..c.len())
                        .filter(|&i| c.get(i, self.dim).is_some())
                        .count()
                })
                .sum()
        };
        let start = self.rows.len();
        let mut report = SemanticUpdate::default();
        // The vectors still in use: those in use before, less those whose
        // slot died since (a liveness scan; only dead slots are looked at).
        let dead_now = (0..start)
            .filter(|&s| !index.is_live(s as u32) && self.rows.get(s).is_some())
            .count();
        let still = if start == 0 {
            0
        } else {
            previous.saturating_sub(dead_now.saturating_sub(self.dead_rows))
        };
        report.reused = still;
        // Known vectors by content, built when the first new slot needs it:
        // the carried ones, and the tombstoned slots' (an edited file's
        // unchanged chunks).
        let mut known: Option<DigestMap<(u32, u32)>> = None;
        let mut buffer = vec![0.0f32; self.dim];
        let mut components = vec![0u8; self.dim];
        let mut text = String::new();
        // One file's text and line index, kept while its chunks are visited
        // (a file's slots are consecutive).
        let mut current: Option<(String, Option<(String, LineIndex)>)> = None;
        // The chunks of the file being visited (a file's slots are
        // consecutive), decoded for this pass only.
        let mut chunks: Option<(u32, &str, u32, std::borrow::Cow<'_, [ChunkRecord]>)> = None;
        // Embeddings computed ahead, on all threads, for the slots of one
        // window that the loop below will embed (see `embed_ahead`).
        let threads = workspace.threads();
        let mut ahead = Ahead::default();
        for slot in start..capacity {
            if (slot - start).is_multiple_of(EMBED_WINDOW) {
                let end = (slot + EMBED_WINDOW).min(capacity);
                let known = known.get_or_insert_with(|| self.known_by_content(index, start));
                ahead = embed_ahead(workspace.root(), index, model, known, slot..end, threads);
            }
            let Some(file) = index.file_number(slot as u32) else {
                self.rows.push(None);
                continue;
            };
            if chunks.as_ref().is_none_or(|c| c.0 != file) {
                chunks = index
                    .file_chunks_once(file)
                    .map(|(path, first, list)| (file, path, first, list));
            }
            let chunk = chunks.as_ref().and_then(|(_, path, first, list)| {
                let ordinal = (slot as u32).checked_sub(*first)?;
                Some((*path, list.get(ordinal as usize)?))
            });
            let Some((rel_path, chunk)) = chunk else {
                self.rows.push(None);
                continue;
            };
            let known = known.get_or_insert_with(|| self.known_by_content(index, start));
            if let Some(&(source, i)) = known.get(&chunk.digest) {
                let row = match source {
                    u32::MAX => self.rows.get(i as usize),
                    s => self
                        .carried
                        .get(s as usize)
                        .and_then(|c| c.get(i as usize, self.dim)),
                };
                if let Some((scale, q, _)) = row {
                    components.copy_from_slice(q);
                    self.rows.push(Some((scale, &components, &chunk.digest)));
                    report.reused += 1;
                    report.reused_rows += 1;
                    continue;
                }
            }
            // Computed ahead when this is the first slot of its content
            // in the window; else (its first failed) computed here, as
            // the one-thread loop always did.
            let scale = match ahead.take(slot as u32, &mut components) {
                Some(scale) => scale,
                None => {
                    if current.as_ref().is_none_or(|(path, _)| path != rel_path) {
                        current =
                            Some((rel_path.to_string(), read_text(workspace.root(), rel_path)));
                    }
                    embed_chunk(
                        model,
                        current.as_ref().and_then(|(_, loaded)| loaded.as_ref()),
                        rel_path,
                        chunk,
                        (&mut text, &mut buffer, &mut components),
                    )
                }
            };
            if scale > 0.0 {
                self.rows.push(Some((scale, &components, &chunk.digest)));
                // Later slots with the same content reuse it.
                known.insert(chunk.digest, (u32::MAX, slot as u32));
                report.embedded += 1;
            } else {
                self.rows.push(None);
                report.skipped += 1;
            }
        }
        self.carried.clear();
        self.live_rows = report.reused + report.embedded;
        self.dead_rows = dead_now;
        report.dropped = previous.saturating_sub(still + report.reused_rows);
        Ok(report)
    }

    /// Digest → (source, row) of every vector a new slot may take over:
    /// the carried ones (source = their position) and this numbering's
    /// tombstoned slots below `start` (source `u32::MAX`).
    fn known_by_content(&self, index: &Index, start: usize) -> DigestMap<(u32, u32)> {
        let mut known = DigestMap::default();
        for (s, carried) in self.carried.iter().enumerate() {
            for i in 0..carried.len() {
                if let Some((_, _, digest)) = carried.get(i, self.dim) {
                    known.insert(*digest, (s as u32, i as u32));
                }
            }
        }
        for slot in 0..start {
            if !index.is_live(slot as u32) {
                if let Some((_, _, digest)) = self.rows.get(slot) {
                    known.insert(*digest, (u32::MAX, slot as u32));
                }
            }
        }
        known
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
    /// its chunks' vectors. `file_share` is clamped to [0, 1]; 0 is the
    /// plain chunk score.
    pub fn semantic_scores_with_files(
        &self,
        view: &SearchView<'_>,
        model: &StaticModel,
        goal: &str,
        file_share: f32,
    ) -> Result<Vec<(u32, f32)>, ModelError> {
        let mut scores = self.scores_unsorted(view.index(), model, goal, file_share)?;
        scores.sort_by(best_first);
        Ok(scores)
    }

    /// The scores of [`semantic_scores_with_files`](Self::semantic_scores_with_files),
    /// in slot order (selecting the best few costs less than sorting all).
    pub(crate) fn scores_unsorted(
        &self,
        index: &Index,
        model: &StaticModel,
        goal: &str,
        file_share: f32,
    ) -> Result<Vec<(u32, f32)>, ModelError> {
        let Some((query, rounded)) = self.goal_query(index, model, goal)? else {
            return Ok(Vec::new());
        };
        let mut scores: Vec<(u32, f32)> = Vec::with_capacity(index.chunk_count());
        self.rows
            .score(&rounded, |s| index.is_live(s), |s, x| scores.push((s, x)));
        let file_share = file_share.clamp(0.0, 1.0);
        if file_share > 0.0 {
            self.blend_files(index, query.as_slice(), file_share, &mut scores);
        }
        Ok(scores)
    }

    /// At least the best `keep` of the scores of
    /// [`semantic_scores_with_files`](Self::semantic_scores_with_files)
    /// (all that score above the `keep`-th), unordered, without a score per
    /// chunk held: the scoring pass keeps a running floor. A file share
    /// (each score blended with its whole file's) needs every score first.
    pub(crate) fn top_unsorted(
        &self,
        index: &Index,
        model: &StaticModel,
        goal: &str,
        file_share: f32,
        keep: usize,
    ) -> Result<Vec<(u32, f32)>, ModelError> {
        if file_share > 0.0 {
            return self.scores_unsorted(index, model, goal, file_share);
        }
        let Some((_, rounded)) = self.goal_query(index, model, goal)? else {
            return Ok(Vec::new());
        };
        Ok(self.rows.top(&rounded, &|s| index.is_live(s), keep))
    }

    /// The goal rounded for [`top_claimed`](Self::top_claimed), or `None`
    /// when nothing can be scored (see `goal_query`; a model other than
    /// the rows' included, which [`top_unsorted`](Self::top_unsorted)
    /// answers with an error and its callers with no scores).
    pub(crate) fn rounded_goal(
        &self,
        index: &Index,
        model: &StaticModel,
        goal: &str,
    ) -> Option<Query> {
        self.goal_query(index, model, goal)
            .ok()
            .flatten()
            .map(|(_, q)| q)
    }

    /// [`Rows::top_claimed`](crate::semantic_rows::Rows::top_claimed) over
    /// the live slots of `index`: this thread's share of a pass shared
    /// through `claims` (no file share: see [`top_unsorted`](Self::top_unsorted)).
    pub(crate) fn top_claimed(
        &self,
        index: &Index,
        query: &Query,
        keep: usize,
        claims: &std::sync::atomic::AtomicUsize,
    ) -> Vec<(u32, f32)> {
        self.rows
            .top_claimed(query, &|s| index.is_live(s), keep, claims)
    }

    /// The goal's vector and its rounded form for the scoring pass, or
    /// `None` when nothing can be scored: no word of the goal is in the
    /// model's vocabulary, or the rows are numbered for another version of
    /// the index (nothing can be said until the next update). A model
    /// other than the one the rows were made with is an error.
    fn goal_query(
        &self,
        index: &Index,
        model: &StaticModel,
        goal: &str,
    ) -> Result<Option<(contextgraph_embed::Embedding, Query)>, ModelError> {
        model.check_compatible(self.dim, &self.fingerprint)?;
        let Some(query) = model.encode(goal) else {
            return Ok(None);
        };
        if self.layout != Some(index.layout_id()) {
            return Ok(None);
        }
        let rounded = Query::new(query.as_slice());
        Ok(Some((query, rounded)))
    }

    /// Blends each score with its file's cosine (the scores are in slot
    /// order, and a file's slots are consecutive).
    fn blend_files(&self, index: &Index, query: &[f32], share: f32, scores: &mut [(u32, f32)]) {
        let mut sum = vec![0.0f32; self.dim];
        let mut start = 0;
        while start < scores.len() {
            let file = index.file_number(scores[start].0);
            let mut end = start;
            sum.iter_mut().for_each(|x| *x = 0.0);
            while end < scores.len() && index.file_number(scores[end].0) == file {
                if let Some((scale, q, _)) = self.rows.get(scores[end].0 as usize) {
                    sum.iter_mut()
                        .zip(q)
                        .for_each(|(s, &x)| *s += f32::from(x as i8) * scale);
                }
                end += 1;
            }
            let norm = contextgraph_embed::dot(&sum, &sum).sqrt();
            if norm > 0.0 {
                let file_cosine = contextgraph_embed::dot(query, &sum) / norm;
                for s in &mut scores[start..end] {
                    s.1 = (1.0 - share) * s.1 + share * file_cosine;
                }
            }
            start = end;
        }
    }
}

/// Best score first, ties by slot.
pub(crate) fn best_first(a: &(u32, f32), b: &(u32, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Slots per window of [`embed_ahead`]: bounds the vectors held ahead of
/// the loop that stores them (a window's worth, not the whole index's).
/// Small in tests, so that a small tree spans many windows and shards.
const EMBED_WINDOW: usize = if cfg!(test) { 48 } else { 8192 };

/// Slots per shard of a window: a thread takes one at a time.
const EMBED_SHARD: usize = if cfg!(test) { 5 } else { 128 };

/// Vectors computed ahead for some slots of a window, ascending by slot.
#[derive(Default)]
struct Ahead {
    /// (slot, scale), ascending by slot.
    slots: Vec<(u32, f32)>,
    /// The slots' components, `dim` bytes each, in the same order.
    components: Vec<u8>,
    /// The next entry to hand out.
    next: usize,
}

impl Ahead {
    /// The scale computed for `slot` (its components copied into
    /// `components`), or `None` when it was not computed ahead. Slots are
    /// asked in ascending order.
    fn take(&mut self, slot: u32, components: &mut [u8]) -> Option<f32> {
        while self.slots.get(self.next).is_some_and(|(s, _)| *s < slot) {
            self.next += 1;
        }
        let &(s, scale) = self.slots.get(self.next)?;
        if s != slot {
            return None;
        }
        let dim = components.len();
        let q = self
            .components
            .get(self.next * dim..(self.next + 1) * dim)?;
        components.copy_from_slice(q);
        self.next += 1;
        Some(scale)
    }
}

/// The file at `root/rel_path` as text with its line index (`None` when it
/// cannot be read or is not UTF-8).
fn read_text(root: &std::path::Path, rel_path: &str) -> Option<(String, LineIndex)> {
    std::fs::read(root.join(rel_path))
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(|t| {
            let lines = LineIndex::new(&t);
            (t, lines)
        })
}

/// Embeds, on up to `threads` threads, the slots of `window` that the
/// storing loop of [`SemanticIndex::update`] may embed: those with a chunk
/// whose content (digest) is not in `known`. The loop takes a slot's
/// vector from here when it embeds that slot, and skips it when an
/// earlier slot of the same content gave it one meanwhile. Each vector
/// depends on its slot's chunk and file alone, and the results come back
/// in slot order (`in_shards`): what each slot gets is what the
/// one-thread loop computed, whatever thread computed it.
fn embed_ahead(
    root: &std::path::Path,
    index: &Index,
    model: &StaticModel,
    known: &DigestMap<(u32, u32)>,
    window: std::ops::Range<usize>,
    threads: usize,
) -> Ahead {
    let dim = model.dim();
    let base = window.start;
    let mut ahead = Ahead::default();
    for (_, done) in crate::scan::in_shards(window.len(), EMBED_SHARD, threads, |range| {
        let mut out: Vec<(u32, f32)> = Vec::with_capacity(range.len());
        let mut bytes: Vec<u8> = Vec::with_capacity(range.len() * dim);
        let mut buffer = vec![0.0f32; dim];
        let mut components = vec![0u8; dim];
        let mut text = String::new();
        let mut current: Option<(String, Option<(String, LineIndex)>)> = None;
        let mut chunks: Option<(u32, &str, u32, std::borrow::Cow<'_, [ChunkRecord]>)> = None;
        for slot in range {
            let slot = (base + slot) as u32;
            let Some(file) = index.file_number(slot) else {
                continue;
            };
            if chunks.as_ref().is_none_or(|c| c.0 != file) {
                chunks = index
                    .file_chunks_once(file)
                    .map(|(path, first, list)| (file, path, first, list));
            }
            let Some((rel_path, chunk)) = chunks.as_ref().and_then(|(_, path, first, list)| {
                let ordinal = slot.checked_sub(*first)?;
                Some((*path, list.get(ordinal as usize)?))
            }) else {
                continue;
            };
            if known.contains_key(&chunk.digest) {
                continue;
            }
            if current.as_ref().is_none_or(|(path, _)| path != rel_path) {
                current = Some((rel_path.to_string(), read_text(root, rel_path)));
            }
            let scale = embed_chunk(
                model,
                current.as_ref().and_then(|(_, loaded)| loaded.as_ref()),
                rel_path,
                chunk,
                (&mut text, &mut buffer, &mut components),
            );
            out.push((slot, scale));
            bytes.extend_from_slice(&components);
        }
        (out, bytes)
    }) {
        // A shard whose thread panicked: its slots are embedded by the
        // storing loop, one by one, as before.
        if let Some((slots, bytes)) = done {
            ahead.slots.extend(slots);
            ahead.components.extend(bytes);
        }
    }
    ahead
}

/// Embeds one chunk (its path, title and region, the region checked
/// against the recorded digest) into `components`; returns its scale, 0
/// when it gets no vector (unreadable or changed file, no known token).
fn embed_chunk(
    model: &StaticModel,
    file: Option<&(String, LineIndex)>,
    rel_path: &str,
    chunk: &ChunkRecord,
    (text, buffer, components): (&mut String, &mut [f32], &mut [u8]),
) -> f32 {
    let region = file.and_then(|(t, lines)| lines.slice(t, chunk.start_line, chunk.end_line));
    let Some(region) = region.filter(|r| sha256(r.as_bytes()) == chunk.digest) else {
        return 0.0;
    };
    embed_region(
        model,
        rel_path,
        &chunk.title,
        region,
        (text, buffer, components),
    )
}

/// Embeds a chunk from its path, title and region into `components`;
/// returns its scale, 0 when it gets no vector (no known token). What a
/// chunk's vector is: the pass after a build ([`embed_chunk`]) calls it,
/// and the cold build's workers (`semantic_cold.rs`) add the same tokens
/// in the same order from one tokenization of the whole file, tested to
/// give this function's bits (`semantic_cold_tests.rs`).
pub(crate) fn embed_region(
    model: &StaticModel,
    rel_path: &str,
    title: &str,
    region: &str,
    (text, buffer, components): (&mut String, &mut [f32], &mut [u8]),
) -> f32 {
    // The path and title carry words the body may lack (`retry.rs`,
    // `impl Backoff`).
    text.clear();
    text.push_str(rel_path);
    text.push('\n');
    text.push_str(title);
    text.push('\n');
    text.push_str(region);
    if !model.encode_into(text, buffer) {
        return 0.0;
    }
    crate::vectors_file::quantize(buffer, components)
}

#[cfg(test)]
#[path = "semantic_parallel_tests.rs"]
mod parallel_tests;
