//! The in-memory side of the index: BM25 over commit messages and changed
//! paths, and which commits touched each path (for anchors and co-change).

use std::collections::HashMap;

use contextgraph_search::tokenize::tokens;

use crate::record::CommitRecord;
use crate::store::Snapshot;

/// BM25 saturation.
const K1: f32 = 1.2;
/// BM25 length normalisation.
const B: f32 = 0.75;
/// How much more a word in the subject counts than one in the body or a path.
const SUBJECT_WEIGHT: u16 = 2;

/// A hash map keyed by strings the index owns, with a fast seeded hasher
/// (the keys are terms and paths of the repository's own history; the seed
/// is random per process, so a crafted history cannot pick collisions).
pub(crate) type Map<V> = HashMap<String, V, foldhash::fast::RandomState>;

/// One term's postings: (commit position, weighted frequency), positions
/// ascending.
pub(crate) type Postings = Vec<(u32, u16)>;

/// The snapshot with its postings, ready to rank. Stored whole (see
/// [`crate::index_file`]), so a warm open need not build it again.
#[derive(Debug, PartialEq)]
pub struct Searchable {
    /// The records, newest first.
    pub snapshot: Snapshot,
    /// Commit position by full id.
    pub(crate) by_id: Map<u32>,
    /// Commits (positions, newest first) that changed each path (the new
    /// path of a rename and its old one both), by path id.
    pub(crate) by_path: Vec<Vec<u32>>,
    /// Path → its id in [`by_path`](Self::by_path).
    pub(crate) path_ids: Map<u32>,
    /// Term → its id in [`postings`](Self::postings).
    pub(crate) term_ids: Map<u32>,
    /// Per term id: (commit, weighted frequency), commits in order.
    pub(crate) postings: Vec<Postings>,
    /// Weighted token count per commit.
    pub(crate) lengths: Vec<u32>,
    average_length: f32,
}

/// The id of `key` in `ids`, adding it (and an empty list in `lists`) when
/// new. Looks up by `&str` first: a key seen before costs no allocation,
/// which is what makes opening a large history cheap (most tokens repeat).
fn intern<T>(ids: &mut Map<u32>, lists: &mut Vec<Vec<T>>, key: &str) -> u32 {
    if let Some(&id) = ids.get(key) {
        return id;
    }
    let id = lists.len() as u32;
    ids.insert(key.to_owned(), id);
    lists.push(Vec::new());
    id
}

/// Commit position by id, and the commits touching each path.
fn lookups_of(commits: &[CommitRecord]) -> (Map<u32>, Map<u32>, Vec<Vec<u32>>) {
    let mut by_id = Map::with_capacity_and_hasher(commits.len(), Default::default());
    let mut path_ids = Map::default();
    let mut by_path: Vec<Vec<u32>> = Vec::new();
    for (i, c) in commits.iter().enumerate() {
        let i = i as u32;
        by_id.insert(c.id.clone(), i);
        for p in &c.paths {
            let id = intern(&mut path_ids, &mut by_path, &p.path);
            by_path[id as usize].push(i);
            if let Some(from) = &p.from {
                let id = intern(&mut path_ids, &mut by_path, from);
                by_path[id as usize].push(i);
            }
        }
    }
    (by_id, path_ids, by_path)
}

/// The term dictionary, each term's postings and each commit's length.
fn postings_of(commits: &[CommitRecord]) -> (Map<u32>, Vec<Postings>, Vec<u32>) {
    let mut term_ids = Map::default();
    let mut postings: Vec<Postings> = Vec::new();
    let mut lengths = Vec::with_capacity(commits.len());
    // This commit's (term id, weight) pairs, merged per term below.
    let mut counts: Vec<(u32, u16)> = Vec::new();
    for (i, c) in commits.iter().enumerate() {
        let i = i as u32;
        counts.clear();
        let mut len = 0u32;
        let mut add = |text: &str, w: u16, len: &mut u32| {
            tokens(text, |t| {
                counts.push((intern(&mut term_ids, &mut postings, t), w));
                *len += u32::from(w);
            });
        };
        add(&c.subject, SUBJECT_WEIGHT, &mut len);
        add(&c.body, 1, &mut len);
        for p in &c.paths {
            add(&p.path, 1, &mut len);
        }
        counts.sort_unstable_by_key(|&(t, _)| t);
        let mut k = 0;
        while k < counts.len() {
            let term = counts[k].0;
            let mut tf = 0u16;
            while k < counts.len() && counts[k].0 == term {
                tf = tf.saturating_add(counts[k].1);
                k += 1;
            }
            postings[term as usize].push((i, tf));
        }
        lengths.push(len);
    }
    (term_ids, postings, lengths)
}

impl Searchable {
    /// Index `snapshot` in memory (one pass over its records).
    pub fn new(snapshot: Snapshot) -> Searchable {
        let commits = &snapshot.commits;
        // The lookups by id and path and the postings read the same records
        // and share nothing: built side by side on two threads (opening a
        // large history is this plus parsing the stored file).
        let ((by_id, path_ids, by_path), (term_ids, postings, lengths)) =
            std::thread::scope(|scope| {
                let lookups = scope.spawn(|| lookups_of(commits));
                let terms = postings_of(commits);
                // A panic in the other thread is a bug here, not bad input:
                // fall back to building the lookups on this one.
                let lookups = lookups.join().unwrap_or_else(|_| lookups_of(commits));
                (lookups, terms)
            });
        Searchable::from_parts(
            snapshot, by_id, by_path, path_ids, term_ids, postings, lengths,
        )
    }

    /// The index from its parts (built by [`Searchable::new`], or read back
    /// by [`crate::index_file::decode`]).
    pub(crate) fn from_parts(
        snapshot: Snapshot,
        by_id: Map<u32>,
        by_path: Vec<Vec<u32>>,
        path_ids: Map<u32>,
        term_ids: Map<u32>,
        postings: Vec<Postings>,
        lengths: Vec<u32>,
    ) -> Searchable {
        let average_length = if lengths.is_empty() {
            1.0
        } else {
            (lengths.iter().map(|&l| u64::from(l)).sum::<u64>() as f32 / lengths.len() as f32)
                .max(1.0)
        };
        Searchable {
            snapshot,
            by_id,
            by_path,
            path_ids,
            term_ids,
            postings,
            lengths,
            average_length,
        }
    }

    /// The record at `pos`.
    pub fn commit(&self, pos: u32) -> Option<&CommitRecord> {
        self.snapshot.commits.get(pos as usize)
    }

    /// The position of the commit with full id `id`.
    pub fn position(&self, id: &str) -> Option<u32> {
        self.by_id.get(id).copied()
    }

    /// The commits that changed `path`, newest first.
    pub fn touching(&self, path: &str) -> &[u32] {
        self.path_ids
            .get(path)
            .and_then(|&id| self.by_path.get(id as usize))
            .map_or(&[], Vec::as_slice)
    }

    /// Number of commits indexed.
    pub fn len(&self) -> usize {
        self.snapshot.commits.len()
    }

    /// Whether no commit is indexed.
    pub fn is_empty(&self) -> bool {
        self.snapshot.commits.is_empty()
    }

    /// BM25 of every commit matching any of `words`: (position, score),
    /// positions ascending. Summed in a dense array (one slot per commit):
    /// a common word matches a large share of a big history, and a hash map
    /// per match would cost more than the scoring.
    pub fn bm25(&self, words: &[String]) -> Vec<(u32, f32)> {
        let n = self.lengths.len() as f32;
        let mut dense: Vec<f32> = Vec::new();
        for w in words {
            let Some(list) = self
                .term_ids
                .get(w.as_str())
                .and_then(|&id| self.postings.get(id as usize))
            else {
                continue;
            };
            if dense.is_empty() {
                dense = vec![0.0; self.lengths.len()];
            }
            let df = list.len() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(pos, tf) in list {
                let len = self.lengths.get(pos as usize).copied().unwrap_or(0) as f32;
                let tf = f32::from(tf);
                let s =
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / self.average_length));
                if let Some(slot) = dense.get_mut(pos as usize) {
                    *slot += s;
                }
            }
        }
        dense
            .into_iter()
            .enumerate()
            .filter(|&(_, s)| s > 0.0)
            .map(|(p, s)| (p as u32, s))
            .collect()
    }

    /// The paths that most often change together with `path`: how many of
    /// the (at most `window` newest) commits touching `path` also touched
    /// each other path, best first, at most `max`.
    pub fn co_changed(&self, path: &str, window: usize, max: usize) -> Vec<(String, u32)> {
        let mut counts: HashMap<&str, u32> = HashMap::new();
        for &pos in self.touching(path).iter().take(window) {
            let Some(c) = self.commit(pos) else { continue };
            if c.paths.len() > 20 {
                // A sweeping change says nothing about which files belong together.
                continue;
            }
            for p in &c.paths {
                if p.path != path && p.from.as_deref() != Some(path) {
                    *counts.entry(p.path.as_str()).or_insert(0) += 1;
                }
            }
        }
        let mut out: Vec<(String, u32)> = counts
            .into_iter()
            .filter(|&(_, n)| n >= 2)
            .map(|(p, n)| (p.to_owned(), n))
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.truncate(max);
        out
    }
}
