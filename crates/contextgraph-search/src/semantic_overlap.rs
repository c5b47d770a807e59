//! One answer's semantic pass run beside the lexical ranking's BM25 part
//! (issue 29): the ranking reads the semantic matches only after BM25, so
//! an answer need not wait for the pass before starting it.
//!
//! **Lock order.** A refresh applies under the index's write lock, and the
//! lock favours writers: once a refresh waits to write, a *second* read
//! lock taken by a thread that already holds one (or whose peer thread
//! holds one it waits on) blocks until that first read is released, which
//! it never is. So the pass must not take the index lock on its thread
//! while the ranking holds it on another. Here, both read the one view an
//! answer holds: [`Workspace::view_with_semantic`] brings the vectors up to
//! date, takes the semantic lock and only then the index's read lock (the
//! order [`Workspace::prepare_semantic`] and [`Workspace::semantic_top`]
//! take them in), and the pass's thread takes no lock at all.

use std::borrow::Cow;
use std::sync::atomic::AtomicUsize;
use std::sync::MutexGuard;

use crate::index::ChunkRecord;
use crate::rank::Ranked;
use crate::search::{FileCache, SearchOptions, SearchView};
use crate::semantic::{best_first, SemanticIndex};
use crate::semantic_rows::{best_of_parts, Query, PARALLEL_ROWS};
use crate::semantic_workspace::{file_share, first_window, TopAsk};
use crate::workspace::Workspace;

/// The chunk vectors held for one view (the semantic lock), and the model
/// they were made with.
pub(crate) struct SemanticHold<'w> {
    guard: MutexGuard<'w, Option<SemanticIndex>>,
    model: &'static contextgraph_embed::StaticModel,
}

impl SemanticHold<'_> {
    /// The vectors held and their model; `None` when there are none.
    pub(crate) fn vectors(
        &self,
    ) -> Option<(&SemanticIndex, &'static contextgraph_embed::StaticModel)> {
        Some((self.guard.as_ref()?, self.model))
    }
}

impl Workspace {
    /// [`view`](Self::view) for an answer that also wants the semantic
    /// matches of its goal ([`SearchView::search_with_semantic`]): the
    /// chunk vectors are brought up to date and held first, then the index
    /// is held for reading, so the semantic pass reads the same version of
    /// the index as the ranking without a second read lock (see the
    /// module's note on lock order). While the view lives, other answers'
    /// semantic passes wait for it.
    pub fn view_with_semantic(&self) -> SearchView<'_> {
        let hold = self.semantic_hold();
        let mut view = self.view();
        view.semantic = hold;
        view
    }

    /// The vectors held, brought up to date first; `None` when the signal
    /// is not in use or they cannot be had (no model, a poisoned lock). A
    /// vectors file that cannot be written still leaves them in memory.
    fn semantic_hold(&self) -> Option<SemanticHold<'_>> {
        if !self.semantic_in_use() {
            return None;
        }
        let model = contextgraph_embed::builtin().ok()?;
        let _ = self.prepare_semantic();
        let guard = self.shared.semantic.lock().ok()?;
        guard.as_ref()?;
        Some(SemanticHold { guard, model })
    }
}

impl SearchView<'_> {
    /// [`search`](SearchView::search) with the goal's best `limit` semantic
    /// matches among the chunks `options.accept` admits (what
    /// [`Workspace::semantic_top`] gives, from this view's version of the
    /// index) as the semantic signal, `options.semantic` not read. From
    /// 50,000 rows on, the pass starts on another thread while the ranking
    /// does its BM25 part, and this thread takes the parts still left
    /// where the ranking needs the matches (below that, it scores them all
    /// there); a ranking that needs none stops the pass. Without
    /// vectors (a plain [`Workspace::view`], the signal off) it searches
    /// with none.
    pub fn search_with_semantic(
        &self,
        goal: &str,
        limit: usize,
        options: &SearchOptions<'_>,
        files: &mut FileCache,
    ) -> Vec<Ranked> {
        self.search_overlapped(goal, limit, options, files, PARALLEL_ROWS)
    }

    /// [`search_with_semantic`](Self::search_with_semantic), the pass given
    /// a thread of its own from `thread_rows` rows on (tests take it on
    /// small indexes too).
    pub(crate) fn search_overlapped(
        &self,
        goal: &str,
        limit: usize,
        options: &SearchOptions<'_>,
        files: &mut FileCache,
        thread_rows: usize,
    ) -> Vec<Ranked> {
        let Some(ask) = self.top_ask(goal).filter(|_| limit > 0) else {
            return self.search_awaiting(goal, options, || Cow::Borrowed(&[]), files);
        };
        let accept: &dyn Fn(&ChunkRecord) -> bool = options.accept;
        let window = first_window(limit);
        let claims = AtomicUsize::new(0);
        let pass = Pass::of(&ask);
        let (pass, claims) = (&pass, &claims);
        std::thread::scope(|scope| {
            // A small index is scored on the answer's thread alone, after
            // its BM25 part: a thread costs more than the rows take.
            let small = ask.semantic.len() < thread_rows;
            let helper = match pass {
                Pass::Nothing => None,
                Pass::Whole | Pass::Claimed(_) if small => None,
                Pass::Whole | Pass::Claimed(_) => std::thread::Builder::new()
                    .name("cgp-semantic-pass".into())
                    .spawn_scoped(scope, move || match pass {
                        Pass::Whole => ask.window(window),
                        Pass::Claimed(query) => ask.claimed(query, window, claims),
                        Pass::Nothing => Vec::new(),
                    })
                    .ok(),
            };
            // Dropped unread when the ranking wants no matches: the parts
            // not yet claimed are then not scored.
            let stop = StopClaims(claims);
            let matches = move || {
                let _stop = stop;
                let first = match pass {
                    Pass::Nothing => Some(Vec::new()),
                    // No thread (a small index, or none could start) or
                    // one that panicked: the pass runs here (the same
                    // scores).
                    Pass::Whole => helper.and_then(|h| h.join().ok()),
                    Pass::Claimed(query) => {
                        // This thread takes the parts still unclaimed.
                        let mut mine = ask.claimed(query, window, claims);
                        let theirs = match helper {
                            Some(h) => h.join().ok(),
                            None => Some(Vec::new()),
                        };
                        theirs.map(|theirs| {
                            mine.extend(theirs);
                            let mut best = best_of_parts(mine, window);
                            best.sort_by(best_first);
                            best
                        })
                    }
                };
                Cow::Owned(ask.accepted(limit, accept, first))
            };
            self.search_awaiting(goal, options, matches, files)
        })
    }

    /// The semantic pass of `goal` over this view, when it holds vectors.
    pub(crate) fn top_ask<'a>(&'a self, goal: &'a str) -> Option<TopAsk<'a>> {
        let (semantic, model) = self.semantic.as_ref()?.vectors()?;
        Some(TopAsk {
            semantic,
            model,
            index: self.index(),
            goal,
            file_share: file_share(self.signals(), goal),
        })
    }
}

/// Leaves no part of a shared pass to claim once dropped (a thread
/// finishes the part it holds): the answer no longer needs the pass.
struct StopClaims<'a>(&'a AtomicUsize);

impl Drop for StopClaims<'_> {
    fn drop(&mut self) {
        // Parts are claimed by adding one: from here on every claim starts
        // past the last row (`saturating_mul` keeps it there).
        self.0
            .store(usize::MAX / 2, std::sync::atomic::Ordering::Relaxed);
    }
}

/// How an answer's semantic pass is split between the pass's thread and
/// the answer's.
enum Pass {
    /// The goal has no vector (no known word, other rows): no matches.
    Nothing,
    /// A question blended with whole files needs every score first: the
    /// pass's thread scores it all.
    Whole,
    /// Parts of the rows claimed by both threads: the pass's thread from
    /// the start, the answer's once its BM25 part is done (two threads, not
    /// the pass's own two beside the ranking: on two cores a third only
    /// waits for one, and the cores are shared).
    Claimed(Query),
}

impl Pass {
    fn of(ask: &TopAsk<'_>) -> Pass {
        if ask.file_share > 0.0 {
            return Pass::Whole;
        }
        match ask.semantic.rounded_goal(ask.index, ask.model, ask.goal) {
            Some(query) => Pass::Claimed(query),
            None => Pass::Nothing,
        }
    }
}

#[cfg(test)]
#[path = "semantic_overlap_tests.rs"]
pub(crate) mod tests;
