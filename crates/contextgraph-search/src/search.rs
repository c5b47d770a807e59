//! Reading the index: a [`SearchView`] holds one consistent version of it
//! (a read lock) so that ranked hits, their chunk records and their
//! relations all come from the same version even while a refresh runs.

use std::collections::HashMap;
use std::path::Path;
use std::sync::RwLockReadGuard;

use contextgraph_types::Relation;

use crate::chunk::LineIndex;
use crate::graph::Graph;
use crate::index::{ChunkRecord, Index};
use crate::rank::{contains_phrase, phrase_words, search_with_signals, Ranked};
use crate::workspace::Workspace;

/// What to search for besides the goal words.
pub struct SearchOptions<'a> {
    /// URIs the goal is anchored on (open files, symbols): chunks near them
    /// in the code graph rank higher (G4).
    pub anchors: &'a [String],
    /// Which chunks may be returned at all (kind filters, `as_of` pins).
    pub accept: &'a dyn Fn(&ChunkRecord) -> bool,
    /// Semantic scores of the goal, best first, from
    /// [`Workspace::semantic_scores`] (empty: no semantic signal).
    pub semantic: &'a [(u32, f32)],
}

impl Default for SearchOptions<'_> {
    fn default() -> Self {
        SearchOptions {
            anchors: &[],
            accept: &|_| true,
            semantic: &[],
        }
    }
}

/// File bytes read while searching (phrase checks), kept so that turning
/// hits into excerpts does not read the same file twice. `None` records a
/// file that could not be read.
#[derive(Debug, Default)]
pub struct FileCache {
    files: HashMap<String, Option<Vec<u8>>>,
}

impl FileCache {
    /// The current bytes of `rel_path` under `root`, read once.
    pub fn get(&mut self, root: &Path, rel_path: &str) -> Option<&[u8]> {
        self.files
            .entry(rel_path.to_owned())
            .or_insert_with(|| std::fs::read(root.join(rel_path)).ok())
            .as_deref()
    }
}

/// One version of a workspace's index, held for reading.
pub struct SearchView<'w> {
    root: &'w Path,
    store: Option<&'w crate::store::Store>,
    signals: crate::rerank::RerankSignals,
    index: RwLockReadGuard<'w, Index>,
}

impl Workspace {
    /// Hold the current version of the index for a search and for reading
    /// the hits' records. Refreshes wait for the view to be dropped before
    /// they apply, so keep it only for one answer.
    pub fn view(&self) -> SearchView<'_> {
        SearchView {
            root: &self.shared.root,
            store: self.shared.store.as_ref(),
            signals: self.shared.options.rank_signals,
            index: self.read_index(),
        }
    }
}

impl<'w> SearchView<'w> {
    /// The index itself.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The code graph over the index (relations, anchor proximity).
    pub fn graph(&self) -> Graph<'_> {
        Graph {
            index: &self.index,
            root: self.root,
        }
    }

    /// The chunk in `slot` and the file it belongs to.
    pub fn chunk(&self, slot: u32) -> Option<(&str, &ChunkRecord)> {
        self.index.chunk(slot)
    }

    /// The relations of the chunk in `slot` (defines, calls, imports …).
    pub fn relations(&self, slot: u32) -> Vec<Relation> {
        self.graph().relations(slot)
    }

    /// Rank the chunks for `goal`, best first. A goal phrase (quoted words)
    /// is checked against the files' current bytes, read through `files`.
    pub fn search(
        &self,
        goal: &str,
        options: &SearchOptions<'_>,
        files: &mut FileCache,
    ) -> Vec<Ranked> {
        let graph = self.graph();
        let words = phrase_words(goal);
        let files = std::cell::RefCell::new(files);
        let has_phrase = |slot: u32| -> bool {
            let Some((rel, c)) = self.index.chunk(slot) else {
                return false;
            };
            let mut files = files.borrow_mut();
            let Some(bytes) = files.get(self.root, rel) else {
                return false;
            };
            let Ok(text) = std::str::from_utf8(bytes) else {
                return false;
            };
            LineIndex::new(text)
                .slice(text, c.start_line, c.end_line)
                .is_some_and(|region| contains_phrase(&phrase_words(region), &words))
        };
        let ranked = search_with_signals(
            &graph,
            goal,
            options.anchors,
            options.accept,
            &has_phrase,
            options.semantic,
            self.signals,
        );
        if !self.index.is_intact() {
            // Saved chunks failed their checksum (and were not served): the
            // saved index goes, so that no later process trusts it either;
            // this one rebuilds at its next refresh.
            if let Some(store) = self.store {
                store.discard();
            }
        }
        ranked
    }
}
