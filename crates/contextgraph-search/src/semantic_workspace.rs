//! The semantic signal inside a [`Workspace`]: when its vectors are loaded,
//! brought in line with the index, written beside the saved index, and
//! served to a query.
//!
//! The vectors files are bound to the snapshot on disk (see
//! [`crate::vectors_file`]): this process remembers which of its slots that
//! snapshot holds ([`SavedLayout`]: all its first slots when it loaded the
//! snapshot, its live slots in order when it wrote one), so it can write
//! the rows in the snapshot's slot order without looking at any chunk.

use contextgraph_embed::ModelError;

use crate::index::{ChunkRecord, Index};
use crate::semantic::{best_first, SemanticIndex, SemanticUpdate, QUESTION_FILE_SHARE};
use crate::vectors_file::{RowRef, VectorsFileError, TAIL_FILE, VECTORS_FILE};
use crate::workspace::Workspace;

/// Most semantic matches a query is served ([`Workspace::semantic_top`]):
/// the ranking layer reads the first `rank::SEMANTIC_CANDIDATES` (30) it
/// accepts, so selecting these instead of sorting every chunk's score (a
/// third of a million on a large repository) changes no ranking. No more
/// than that (it was 256): the scoring pass keeps the best twice this many
/// as it goes, and a smaller running top passes fewer rows on to be
/// offered (its floor rises sooner). Never under the ranking's number (a
/// compile-time check below).
pub const SEMANTIC_SERVED: usize = 32;
const _: () = assert!(SEMANTIC_SERVED >= crate::rank::SEMANTIC_CANDIDATES);

/// Which slots of this process's index the snapshot on disk holds.
#[derive(Debug, Clone)]
pub(crate) struct SavedLayout {
    /// The snapshot's id.
    id: [u8; 32],
    /// The [`Index::layout_id`] the slots below are numbered by.
    layout: u64,
    /// The slot of this index that each snapshot slot is; `None`: slot
    /// `i` is slot `i` (the snapshot was loaded, or written with no dead
    /// slots).
    slots: Option<Vec<u32>>,
    /// The snapshot's number of slots.
    len: usize,
    /// Slots from here on came after the snapshot (the tail file's).
    boundary: usize,
}

impl SavedLayout {
    /// The snapshot `index` was loaded from.
    pub(crate) fn loaded(index: &Index) -> Option<SavedLayout> {
        let (id, len) = index.saved_snapshot()?;
        Some(SavedLayout {
            id,
            layout: index.layout_id(),
            slots: None,
            len: len as usize,
            boundary: len as usize,
        })
    }

    /// The snapshot `id` just written from `index` (its live slots, in
    /// order: see `index/snapshot.rs`).
    pub(crate) fn written(id: [u8; 32], index: &Index) -> SavedLayout {
        let capacity = index.slot_capacity();
        let live: Vec<u32> = index.live_slot_numbers().collect();
        let len = live.len();
        SavedLayout {
            id,
            layout: index.layout_id(),
            slots: (len != capacity).then_some(live),
            len,
            boundary: capacity,
        }
    }

    fn slot(&self, i: usize) -> Option<usize> {
        match &self.slots {
            Some(slots) => slots.get(i).map(|&s| s as usize),
            None => (i < self.len).then_some(i),
        }
    }
}

/// What [`Workspace::prepare_semantic`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SemanticPrepare {
    /// The vectors came from the vectors file, read in place.
    pub loaded: bool,
    /// A vectors file was there but not used, and why (it was rebuilt).
    pub rejected: Option<String>,
    /// What bringing the vectors in line with the index did.
    pub update: SemanticUpdate,
    /// A vectors file was (re)written.
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
    File(VectorsFileError),
}

impl Workspace {
    /// Where this workspace's chunk vectors persist: beside the index in
    /// its cache directory (none when persistence is disabled). The tail
    /// file ([`TAIL_FILE`]) lies beside it.
    pub fn vectors_path(&self) -> Option<std::path::PathBuf> {
        self.shared
            .store
            .as_ref()
            .map(|s| s.dir().join(VECTORS_FILE))
    }

    /// Whether the chunk vectors are read in place from a vectors file
    /// written for the loaded snapshot (a warm open did no per-chunk work
    /// to line them up).
    pub fn semantic_is_mapped(&self) -> bool {
        self.shared
            .semantic
            .lock()
            .is_ok_and(|s| s.as_ref().is_some_and(SemanticIndex::is_mapped))
    }

    fn tail_path(&self) -> Option<std::path::PathBuf> {
        self.shared.store.as_ref().map(|s| s.dir().join(TAIL_FILE))
    }

    /// Whether the semantic signal runs for this workspace: switched on,
    /// and the index within [`WorkspaceOptions::semantic_max_chunks`].
    ///
    /// [`WorkspaceOptions::semantic_max_chunks`]: crate::WorkspaceOptions::semantic_max_chunks
    pub fn semantic_in_use(&self) -> bool {
        let options = &self.shared.options;
        options.semantic && self.view().index().chunk_count() <= options.semantic_max_chunks
    }

    /// Brings the chunk vectors in line with the index now: maps them from
    /// the vectors file when it was written for the loaded snapshot (no
    /// per-chunk work), fills the slots it lacks (from the tail file, from
    /// vectors of the same content, else by embedding), and rewrites the
    /// files when anything changed. Called when the workspace opens with
    /// the semantic signal on (so the cost is paid at index time, not by
    /// the first query) and before scoring a goal. A no-op when the signal
    /// is off.
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
            // A snapshot written since the vectors were (a journal folded
            // by a refresh that added no slot) gets its aligned file now,
            // so the next process maps it instead of carrying it over.
            let mut out = SemanticPrepare::default();
            if let Some(semantic) = guard.as_mut() {
                out.written = self
                    .write_vectors(semantic, false)
                    .map_err(SemanticError::File)?;
            }
            return Ok(out);
        }
        let mut out = SemanticPrepare::default();
        let mut semantic = match guard.take() {
            Some(semantic) => semantic,
            None => {
                let mut read = |path: Option<std::path::PathBuf>, aligned: bool| {
                    let path = path?;
                    let result = if aligned {
                        crate::vectors_file::read_aligned(&path, model).map(|a| a.map(Ok))
                    } else {
                        crate::vectors_file::read_tail(&path, model).map(|t| t.map(Err))
                    };
                    match result {
                        Ok(found) => found,
                        Err(e) => {
                            out.rejected.get_or_insert(e.to_string());
                            None
                        }
                    }
                };
                let aligned = read(self.vectors_path(), true).and_then(Result::ok);
                let tail = read(self.tail_path(), false).and_then(Result::err);
                let semantic = SemanticIndex::from_saved(model, self.view().index(), aligned, tail);
                out.loaded = semantic.is_mapped();
                semantic
            }
        };
        out.update = semantic.update(self, model).map_err(SemanticError::Model)?;
        let force = out.update.changed() || out.rejected.is_some() || !out.loaded;
        let written = self.write_vectors(&mut semantic, force);
        *guard = Some(semantic);
        out.written = written.map_err(SemanticError::File)?;
        Ok(out)
    }

    /// Writes the vectors beside the snapshot on disk: the aligned file
    /// when it is not already the one for that snapshot, and the tail
    /// (the slots since the snapshot) with it or when `force`. Nothing is
    /// written when the snapshot's slots can no longer be told apart in
    /// this index (it was compacted in memory since): the next process that
    /// loads the snapshot carries the vectors over by content.
    fn write_vectors(
        &self,
        semantic: &mut SemanticIndex,
        force: bool,
    ) -> Result<bool, VectorsFileError> {
        let (Some(path), Some(tail_path)) = (self.vectors_path(), self.tail_path()) else {
            return Ok(false);
        };
        let view = self.view();
        let index = view.index();
        // Held while writing (a refresh that writes a snapshot waits): the
        // layout must not change under the rows being written.
        let saved = self
            .shared
            .saved_layout
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let Some(saved) = saved.as_ref().filter(|s| {
            s.layout == index.layout_id() && semantic.layout() == Some(index.layout_id())
        }) else {
            return Ok(false);
        };
        let aligned = semantic.saved_for != Some(saved.id);
        if !aligned && !force {
            return Ok(false);
        }
        const NONE: [u8; 32] = [0; 32];
        let row = |slot: Option<usize>| -> RowRef<'_> {
            slot.and_then(|s| semantic.row(s))
                .unwrap_or((0.0, &[], &NONE))
        };
        if aligned {
            let rows: Vec<RowRef<'_>> = (0..saved.len).map(|i| row(saved.slot(i))).collect();
            crate::vectors_file::write_aligned(
                &path,
                semantic.dim(),
                semantic.fingerprint(),
                &saved.id,
                &rows,
            )?;
        }
        if aligned || force {
            let rows: Vec<RowRef<'_>> = (saved.boundary..index.slot_capacity())
                .filter(|&s| index.is_live(s as u32))
                .map(|s| row(Some(s)))
                .collect();
            crate::vectors_file::write_tail(
                &tail_path,
                semantic.dim(),
                semantic.fingerprint(),
                &rows,
            )?;
        }
        if aligned {
            semantic.saved_for = Some(saved.id);
        }
        Ok(aligned || force)
    }

    /// Semantic scores of `goal` against every chunk, best first, from the
    /// built-in model (see [`Workspace::prepare_semantic`] for where the
    /// chunk vectors come from). Empty when the semantic signal is off, the
    /// model cannot be loaded, or the goal has no word the model knows. A
    /// question's scores blend in each chunk's whole file
    /// ([`QUESTION_FILE_SHARE`]) unless `RerankSignals::semantic_files` is
    /// off. A query wants only the best: see
    /// [`semantic_top`](Self::semantic_top).
    pub fn semantic_scores(&self, goal: &str) -> Vec<(u32, f32)> {
        let mut scores = self.semantic_unsorted(goal);
        scores.sort_by(best_first);
        scores
    }

    /// The best `limit` of [`semantic_scores`](Self::semantic_scores) among
    /// the chunks `accept` admits, best first: exactly the first `limit`
    /// accepted entries of the full list, found by selecting instead of
    /// sorting every score (on a 345,071-chunk index the sort alone took
    /// longer than the scoring pass).
    pub fn semantic_top(
        &self,
        goal: &str,
        limit: usize,
        accept: &dyn Fn(&ChunkRecord) -> bool,
    ) -> Vec<(u32, f32)> {
        if limit == 0 {
            return Vec::new();
        }
        let file_share = file_share(self.shared.options.rank_signals, goal);
        self.with_semantic(|semantic, model, view| {
            let ask = TopAsk {
                semantic,
                model,
                index: view.index(),
                goal,
                file_share,
            };
            ask.accepted(limit, accept, None)
        })
        .unwrap_or_default()
    }

    /// Runs `f` on the semantic vectors brought in line with the index,
    /// the built-in model and a view of the index; `None` when the signal
    /// is not in use or its vectors cannot be had (no model, a poisoned
    /// lock). A vectors file that cannot be written still leaves the
    /// vectors in memory: scoring goes on.
    fn with_semantic<R>(
        &self,
        f: impl FnOnce(
            &SemanticIndex,
            &contextgraph_embed::StaticModel,
            &crate::search::SearchView<'_>,
        ) -> R,
    ) -> Option<R> {
        // The vectors held first, then the index (the lock order of
        // `semantic_overlap.rs`).
        let view = self.view_with_semantic();
        let (semantic, model) = view.semantic.as_ref()?.vectors()?;
        Some(f(semantic, model, &view))
    }

    /// Every chunk's score in slot order (see
    /// [`semantic_scores`](Self::semantic_scores)).
    fn semantic_unsorted(&self, goal: &str) -> Vec<(u32, f32)> {
        let file_share = file_share(self.shared.options.rank_signals, goal);
        self.with_semantic(|semantic, model, view| {
            semantic
                .scores_unsorted(view.index(), model, goal, file_share)
                .unwrap_or_default()
        })
        .unwrap_or_default()
    }
}

/// The share of a chunk's score its file has for `goal` (see
/// [`QUESTION_FILE_SHARE`]).
pub(crate) fn file_share(signals: crate::rerank::RerankSignals, goal: &str) -> f32 {
    if signals.semantic_files && crate::rerank::QueryShape::of(goal).question {
        QUESTION_FILE_SHARE
    } else {
        0.0
    }
}

/// One goal's semantic pass over one version of the index.
#[derive(Clone, Copy)]
pub(crate) struct TopAsk<'a> {
    pub(crate) semantic: &'a SemanticIndex,
    pub(crate) model: &'a contextgraph_embed::StaticModel,
    pub(crate) index: &'a Index,
    pub(crate) goal: &'a str,
    pub(crate) file_share: f32,
}

impl TopAsk<'_> {
    /// The best `window` scores, best first (more when a file share needs
    /// every score). Reads no lock: callable from any thread.
    pub(crate) fn window(&self, window: usize) -> Vec<(u32, f32)> {
        let mut scores = self
            .semantic
            .top_unsorted(self.index, self.model, self.goal, self.file_share, window)
            .unwrap_or_default();
        scores.sort_by(best_first);
        scores
    }

    /// This thread's share of a pass of `query` (this goal rounded) shared
    /// through `claims`: see [`SemanticIndex::top_claimed`].
    pub(crate) fn claimed(
        &self,
        query: &crate::semantic_rows::Query,
        window: usize,
        claims: &std::sync::atomic::AtomicUsize,
    ) -> Vec<(u32, f32)> {
        self.semantic.top_claimed(self.index, query, window, claims)
    }

    /// The first `limit` scores of chunks `accept` admits, best first
    /// ([`Workspace::semantic_top`]); `first`, when given, is
    /// [`window`](Self::window)`(2 * limit)` already computed.
    pub(crate) fn accepted(
        &self,
        limit: usize,
        accept: &dyn Fn(&ChunkRecord) -> bool,
        mut first: Option<Vec<(u32, f32)>>,
    ) -> Vec<(u32, f32)> {
        // Most goals find `limit` accepted chunks among the best few
        // `limit`s; a selective filter widens the window until it does.
        let mut window = first_window(limit);
        loop {
            let scores = first.take().unwrap_or_else(|| self.window(window));
            let exhausted = scores.len() < window;
            let out: Vec<(u32, f32)> = scores
                .into_iter()
                .filter(|&(s, _)| self.index.chunk(s).is_some_and(|(_, c)| accept(c)))
                .take(limit)
                .collect();
            if out.len() == limit || exhausted {
                return out;
            }
            window = window.saturating_mul(8);
        }
    }
}

/// The first window [`TopAsk::accepted`] scores for `limit` matches.
pub(crate) fn first_window(limit: usize) -> usize {
    limit.saturating_mul(2)
}

#[cfg(test)]
mod tests {
    use crate::{CacheLocation, Workspace, WorkspaceOptions};

    /// A warm open lines the saved vectors up with the index without
    /// looking at any chunk (the vectors file is read in slot order), and
    /// a query decodes only the chunks it serves, not every chunk.
    #[test]
    fn a_warm_open_and_a_query_decode_no_chunk_to_find_its_vector() {
        let dir = crate::semantic_overlap::tests::step_and_glyph_repo();
        let cache = tempfile::tempdir().expect("cache");
        let options = || WorkspaceOptions {
            cache: CacheLocation::Base(cache.path().to_path_buf()),
            semantic: true,
            ..WorkspaceOptions::default()
        };
        drop(Workspace::open(dir.path(), options()).expect("cold open"));

        let (ws, _) = Workspace::open(dir.path(), options()).expect("warm open");
        assert!(ws.semantic_is_mapped());
        let chunks = ws.read_index().chunk_count();
        assert!(chunks >= 80, "{chunks}");
        assert_eq!(
            ws.read_index().decoded_chunks(),
            0,
            "no chunk decoded at open"
        );
        let served = ws.semantic_top("retry the request later", 3, &|_| true);
        assert_eq!(served.len(), 3);
        let decoded = ws.read_index().decoded_chunks();
        assert!(
            decoded <= 3,
            "a query decodes the chunks it serves, not all {chunks}: {decoded}"
        );
    }
}
