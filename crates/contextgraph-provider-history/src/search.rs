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

/// The snapshot with its postings, ready to rank.
#[derive(Debug)]
pub struct Searchable {
    /// The records, newest first.
    pub snapshot: Snapshot,
    /// Commit position by full id.
    by_id: HashMap<String, u32>,
    /// Commits (positions, newest first) that changed each path (the new
    /// path of a rename and its old one both).
    by_path: HashMap<String, Vec<u32>>,
    /// Term → (commit, weighted frequency).
    postings: HashMap<String, Vec<(u32, u16)>>,
    /// Weighted token count per commit.
    lengths: Vec<u32>,
    average_length: f32,
}

impl Searchable {
    /// Index `snapshot` in memory (one pass over its records).
    pub fn new(snapshot: Snapshot) -> Searchable {
        let mut by_id = HashMap::with_capacity(snapshot.commits.len());
        let mut by_path: HashMap<String, Vec<u32>> = HashMap::new();
        let mut postings: HashMap<String, Vec<(u32, u16)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(snapshot.commits.len());
        let mut counts: HashMap<String, u16> = HashMap::new();
        for (i, c) in snapshot.commits.iter().enumerate() {
            let i = i as u32;
            by_id.insert(c.id.clone(), i);
            for p in &c.paths {
                by_path.entry(p.path.clone()).or_default().push(i);
                if let Some(from) = &p.from {
                    by_path.entry(from.clone()).or_default().push(i);
                }
            }
            counts.clear();
            let mut len = 0u32;
            let mut add = |text: &str, w: u16, len: &mut u32| {
                tokens(text, |t| {
                    let e = counts.entry(t.to_owned()).or_insert(0);
                    *e = e.saturating_add(w);
                    *len += u32::from(w);
                });
            };
            add(&c.subject, SUBJECT_WEIGHT, &mut len);
            add(&c.body, 1, &mut len);
            for p in &c.paths {
                add(&p.path, 1, &mut len);
            }
            for (t, n) in counts.drain() {
                postings.entry(t).or_default().push((i, n));
            }
            lengths.push(len);
        }
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
        self.by_path.get(path).map_or(&[], Vec::as_slice)
    }

    /// Number of commits indexed.
    pub fn len(&self) -> usize {
        self.snapshot.commits.len()
    }

    /// Whether no commit is indexed.
    pub fn is_empty(&self) -> bool {
        self.snapshot.commits.is_empty()
    }

    /// BM25 of every commit matching any of `words`, by position.
    pub fn bm25(&self, words: &[String]) -> HashMap<u32, f32> {
        let n = self.lengths.len() as f32;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for w in words {
            let Some(list) = self.postings.get(w) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(pos, tf) in list {
                let len = self.lengths.get(pos as usize).copied().unwrap_or(0) as f32;
                let tf = f32::from(tf);
                let s =
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / self.average_length));
                *scores.entry(pos).or_insert(0.0) += s;
            }
        }
        scores
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
