//! Reading the index: a [`SearchView`] holds one consistent version of it
//! (a read lock) so that ranked hits, their chunk records and their
//! relations all come from the same version even while a refresh runs.

use std::collections::HashMap;
use std::path::Path;
use std::sync::RwLockReadGuard;

use contextgraph_types::Relation;

use crate::graph::Graph;
use crate::index::{ChunkRecord, Index};
use crate::rank::{phrase_words, search_awaiting, Ranked};
use crate::workspace::Workspace;

/// What to search for besides the goal words.
pub struct SearchOptions<'a> {
    /// URIs the goal is anchored on (open files, symbols): chunks near them
    /// in the code graph rank higher (G4).
    pub anchors: &'a [String],
    /// Which chunks may be returned at all (kind filters, `as_of` pins).
    pub accept: &'a dyn Fn(&ChunkRecord) -> bool,
    /// Semantic scores of the goal, best first: the best matches a query
    /// needs from [`Workspace::semantic_top`] (or all of
    /// [`Workspace::semantic_scores`]); empty: no semantic signal.
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
    /// `file://` URIs made (`None`: the path has none), by relative path.
    uris: HashMap<String, Option<String>>,
    /// Line starts of the files read, by relative path, found as far as
    /// a region asked for needed.
    lines: HashMap<String, LineStarts>,
    /// Whether some indexed region no longer matched its file's bytes (see
    /// [`FileCache::stale_flag`]).
    stale: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl FileCache {
    /// A flag to raise when a file read through this cache no longer holds
    /// the bytes the index has for it: the index is behind that file, so an
    /// answer made while skipping the scan (see [`crate::watch_trust`]) is
    /// made again after one. Owned, so it can be raised while the cache's
    /// bytes are borrowed.
    pub fn stale_flag(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        std::sync::Arc::clone(&self.stale)
    }

    /// Whether the [`stale_flag`](Self::stale_flag) was raised.
    pub fn saw_stale(&self) -> bool {
        self.stale.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The current bytes of `rel_path` under `root`, read once.
    pub fn get(&mut self, root: &Path, rel_path: &str) -> Option<&[u8]> {
        self.files
            .entry(rel_path.to_owned())
            .or_insert_with(|| std::fs::read(root.join(rel_path)).ok())
            .as_deref()
    }

    /// The bytes of lines `start..=end` (1-based) of `rel_path`, each
    /// line's terminator included, or `None` when the file cannot be read
    /// or has fewer lines: the SDK's `read_range` rule, with the file's
    /// lines found once rather than counted from its start for every
    /// region (an answer takes many regions of one file).
    pub fn lines(&mut self, root: &Path, rel_path: &str, start: u32, end: u32) -> Option<&[u8]> {
        self.get(root, rel_path)?;
        let bytes = self.files.get(rel_path)?.as_deref()?;
        let index = self
            .lines
            .entry(rel_path.to_owned())
            .or_insert_with(|| LineStarts::new(bytes));
        bytes.get(index.byte_range(bytes, start, end)?)
    }

    /// The `file://` URI of `rel_path` under `root`
    /// ([`contextgraph_types::file_uri::path_to_file_uri`]), made once:
    /// every frame of a file names it, and making one costs a path walk
    /// and percent-encoding.
    pub fn file_uri(&mut self, root: &Path, rel_path: &str) -> Option<&str> {
        self.uris
            .entry(rel_path.to_owned())
            .or_insert_with(|| {
                contextgraph_types::file_uri::path_to_file_uri(&root.join(rel_path)).ok()
            })
            .as_deref()
    }
}

/// The line starts of one file's bytes, found from its start only as far as
/// the regions asked for need: an answer's frames cite a few regions of a
/// file, often near its top, and a large file's newlines past the last one
/// were a twentieth of an answer's instructions on a 17,000-file tree. The
/// ranges given are [`crate::chunk::LineIndex::byte_range`]'s over the
/// whole file (the same rule: a line ends after each `\n`, a final line
/// without one is a line), tested against it.
#[derive(Debug)]
struct LineStarts {
    /// Starts of the lines found so far, in order.
    starts: Vec<usize>,
    /// Bytes scanned for newlines: `0..scanned`.
    scanned: usize,
}

impl LineStarts {
    fn new(bytes: &[u8]) -> LineStarts {
        LineStarts {
            starts: if bytes.is_empty() {
                Vec::new()
            } else {
                vec![0]
            },
            scanned: 0,
        }
    }

    /// Byte range of lines `start..=end` (1-based) of `bytes` (the bytes
    /// these starts are of), its last newline included; `None` when out of
    /// range.
    fn byte_range(&mut self, bytes: &[u8], start: u32, end: u32) -> Option<std::ops::Range<usize>> {
        if start == 0 || start > end {
            return None;
        }
        let end = end as usize;
        // Line `end + 1`'s start, or the end of the bytes.
        while self.starts.len() <= end && self.scanned < bytes.len() {
            match memchr::memchr(b'\n', bytes.get(self.scanned..)?) {
                Some(i) => {
                    let next = self.scanned + i + 1;
                    if next < bytes.len() {
                        self.starts.push(next);
                    }
                    self.scanned = next;
                }
                None => self.scanned = bytes.len(),
            }
        }
        if end > self.starts.len() {
            return None;
        }
        let a = *self.starts.get(start as usize - 1)?;
        let b = self.starts.get(end).copied().unwrap_or(bytes.len());
        Some(a..b)
    }
}

/// Whether the words of `region` (as [`phrase_words`] splits and lowercases
/// them) hold `words` contiguously, in order: [`contains_phrase`] over
/// [`phrase_words`]`(region)`, without a lowercased copy of every word of
/// the region (an ASCII word is compared lowercased in place; any other is
/// lowercased as `phrase_words` does, since `str::to_lowercase` depends on
/// a letter's position in the word).
fn holds_phrase(region: &str, words: &[String]) -> bool {
    if words.is_empty() {
        return false;
    }
    let hay: Vec<&str> = region
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    let same = |h: &str, w: &String| {
        if h.is_ascii() {
            h.len() == w.len() && h.bytes().map(|b| b.to_ascii_lowercase()).eq(w.bytes())
        } else {
            h.to_lowercase() == *w
        }
    };
    hay.windows(words.len())
        .any(|win| win.iter().zip(words).all(|(h, w)| same(h, w)))
}

/// Candidates scoring under this share of the best candidate's score are
/// left out of a search's answer.
///
/// Why: a prompt budget is a ceiling, not a quota. Without a floor every
/// answer is filled to the budget with whatever matched a goal word
/// anywhere (`SkipReason::as_str` for "which eviction reasons does
/// revalidation report"), which costs the model tokens and attention for
/// nothing. On the retrieval benchmark a tenth of the best score cut the
/// mean answer from 5,790 to 3,862 budget tokens with the held-out
/// NDCG@10 unchanged (0.847) and the tuning half 0.860 -> 0.859; 0.15
/// cost architecture queries 0.002, 0.2 cost 0.006 overall (see the
/// workspace provider's README).
pub const RELEVANCE_FLOOR: f32 = 0.1;

/// Drop the candidates under [`RELEVANCE_FLOOR`] of the best score, except
/// anchored ones (the caller named them, G4). Order is kept. Not applied
/// to a goal asked with anchors.
pub(crate) fn apply_relevance_floor(ranked: &mut Vec<Ranked>) {
    let top = ranked
        .iter()
        .map(|r| r.score)
        .filter(|s| s.is_finite())
        .fold(0.0f32, f32::max);
    let floor = top * RELEVANCE_FLOOR;
    ranked.retain(|r| r.anchored || r.score >= floor);
}

/// One version of a workspace's index, held for reading.
pub struct SearchView<'w> {
    root: &'w Path,
    store: Option<&'w crate::store::Store>,
    signals: crate::rerank::RerankSignals,
    /// The chunk vectors, held from before the read lock below was taken
    /// (see [`Workspace::view_with_semantic`]); `None` for a plain view.
    pub(crate) semantic: Option<crate::semantic_overlap::SemanticHold<'w>>,
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
            semantic: None,
            index: self.read_index(),
        }
    }
}

impl<'w> SearchView<'w> {
    /// The index itself.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The ranking layer's steps this view's workspace uses.
    pub(crate) fn signals(&self) -> crate::rerank::RerankSignals {
        self.signals
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

    /// [`relations`](Self::relations), the file URIs they name made
    /// through `files` (once per file per query, see
    /// [`FileCache::file_uri`]).
    pub fn relations_cached(&self, slot: u32, files: &mut FileCache) -> Vec<Relation> {
        let root = self.root;
        self.graph().relations_with(slot, &mut |rel| {
            files
                .file_uri(root, rel)
                .map_or_else(|| crate::uri::file_uri(root, rel), str::to_owned)
        })
    }

    /// Rank the chunks for `goal`, best first. A goal phrase (quoted words)
    /// is checked against the files' current bytes, read through `files`.
    pub fn search(
        &self,
        goal: &str,
        options: &SearchOptions<'_>,
        files: &mut FileCache,
    ) -> Vec<Ranked> {
        let semantic = || std::borrow::Cow::Borrowed(options.semantic);
        self.search_awaiting(goal, options, semantic, files)
    }

    /// [`search`](Self::search) with the semantic matches given by
    /// `semantic`, asked for only once the ranking's BM25 part is done (see
    /// [`search_with_semantic`](Self::search_with_semantic)); `options`'
    /// own are not read.
    pub(crate) fn search_awaiting<'s>(
        &self,
        goal: &str,
        options: &SearchOptions<'_>,
        semantic: impl FnOnce() -> std::borrow::Cow<'s, [(u32, f32)]>,
        files: &mut FileCache,
    ) -> Vec<Ranked> {
        let graph = self.graph();
        let words = phrase_words(goal);
        let files = std::cell::RefCell::new(files);
        // Whether each file is text, checked once per search, and its lines
        // found once per query (the frames reuse them), not once per
        // candidate: candidates are often chunks of one file.
        let text: std::cell::RefCell<HashMap<&str, bool>> = std::cell::RefCell::default();
        let has_phrase = |slot: u32| -> bool {
            let Some((rel, c)) = self.index.chunk(slot) else {
                return false;
            };
            let mut files = files.borrow_mut();
            let is_text = *text.borrow_mut().entry(rel).or_insert_with(|| {
                files
                    .get(self.root, rel)
                    .is_some_and(|bytes| std::str::from_utf8(bytes).is_ok())
            });
            // A region of a text file, cut at line starts, is text.
            is_text
                && files
                    .lines(self.root, rel, c.start_line, c.end_line)
                    .and_then(|region| std::str::from_utf8(region).ok())
                    .is_some_and(|region| holds_phrase(region, &words))
        };
        let mut ranked = search_awaiting(
            &graph,
            goal,
            options.anchors,
            options.accept,
            &has_phrase,
            semantic,
            self.signals,
        );
        // With anchors the caller asked for a neighbourhood (G3: the
        // anchor's graph neighbours score by proximity, far below the
        // anchor itself), so nothing is cut.
        if self.signals.floor && options.anchors.is_empty() {
            apply_relevance_floor(&mut ranked);
        }
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

#[cfg(test)]
mod floor_tests {
    use super::{apply_relevance_floor, RELEVANCE_FLOOR};
    use crate::rank::Ranked;

    fn r(slot: u32, score: f32, anchored: bool) -> Ranked {
        Ranked {
            slot,
            score,
            anchored,
        }
    }

    #[test]
    fn candidates_under_a_tenth_of_the_best_go_anchored_ones_stay() {
        let mut ranked = vec![
            r(0, 0.8, false),
            r(1, 0.5, false),
            r(2, 0.8 * RELEVANCE_FLOOR, false),
            r(3, 0.079, false),
            r(4, 0.01, true),
            r(5, f32::NAN, false),
        ];
        apply_relevance_floor(&mut ranked);
        let kept: Vec<u32> = ranked.iter().map(|r| r.slot).collect();
        assert_eq!(kept, vec![0, 1, 2, 4]);
    }

    #[test]
    fn an_all_zero_ranking_is_kept_whole() {
        let mut ranked = vec![r(0, 0.0, false), r(1, 0.0, false)];
        apply_relevance_floor(&mut ranked);
        assert_eq!(ranked.len(), 2);
        let mut empty: Vec<Ranked> = Vec::new();
        apply_relevance_floor(&mut empty);
        assert!(empty.is_empty());
    }
}

#[cfg(test)]
mod line_starts_tests {
    use super::LineStarts;
    use crate::chunk::LineIndex;

    /// Regions asked in any order, of files with and without a final
    /// newline, empty lines, an empty file and a file of newlines only,
    /// get the whole-file index's ranges (and its `None`s).
    #[test]
    fn partial_line_starts_give_the_whole_file_ranges() {
        let files: [&[u8]; 6] = [
            b"",
            b"\n",
            b"\n\n\n",
            b"one\ntwo\n\nfour",
            b"one\ntwo\n\nfour\n",
            b"a\r\nb\xff\n\nlast line without newline",
        ];
        let asks: Vec<(u32, u32)> = (0..7u32)
            .flat_map(|a| (0..7u32).map(move |b| (a, b)))
            .collect();
        for bytes in files {
            let whole = LineIndex::of_bytes(bytes);
            for order in [asks.clone(), asks.iter().rev().copied().collect()] {
                let mut partial = LineStarts::new(bytes);
                for &(a, b) in &order {
                    assert_eq!(
                        partial.byte_range(bytes, a, b),
                        whole.byte_range(a, b),
                        "{bytes:?} {a}..={b}"
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::holds_phrase;
    use crate::rank::{contains_phrase, phrase_words};

    #[test]
    fn holds_phrase_is_contains_phrase_over_phrase_words() {
        let regions = [
            "fn parse(x) { Err(\"Connection Refused after ALL retries\") }",
            "ΟΔΟΣ Σ καλΟΣ: ΌΣΟΣ όσος; İstanbul ıi",
            "snake_case_Name x_y {} z",
            "",
            "one",
        ];
        let goals = [
            "connection refused after all",
            "refused after",
            "οδος σ καλος",
            "όσος όσος",
            "καλος όσος",
            "istanbul",
            "i̇stanbul ıi",
            "snake_case_name x_y z",
            "one",
            "",
        ];
        for region in regions {
            for goal in goals {
                let words = phrase_words(goal);
                assert_eq!(
                    holds_phrase(region, &words),
                    contains_phrase(&phrase_words(region), &words),
                    "{region:?} / {goal:?}"
                );
            }
        }
        assert!(holds_phrase(regions[0], &phrase_words("Refused after all")));
        assert!(holds_phrase(regions[1], &phrase_words("ΟΔΟΣ Σ ΚΑΛΟΣ")));
    }
}
