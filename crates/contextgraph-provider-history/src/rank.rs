//! How commits are ranked for a goal: BM25 of the goal's words against
//! messages and changed paths, anchors (blame of the anchored lines, the
//! commits that touched an anchored file, and the files that usually change
//! with it), and recency as a weak prior.

use std::collections::HashMap;

use contextgraph_search::tokenize::tokens;

use crate::search::Searchable;

/// Weight of the goal's words (BM25, normalised to the best match).
pub const WORDS_WEIGHT: f32 = 0.6;
/// Weight of the anchors' evidence.
pub const ANCHOR_WEIGHT: f32 = 0.35;
/// Weight of recency (newest 1, oldest 0), a tie-breaker more than a signal.
pub const RECENCY_WEIGHT: f32 = 0.05;

/// Anchor evidence for a commit: blame owns the anchored lines.
pub const BLAME_EVIDENCE: f32 = 1.0;
/// Anchor evidence for a commit: it touched the anchored file (the newest
/// count most, see [`touch_evidence`]).
pub const TOUCH_EVIDENCE: f32 = 0.5;
/// Anchor evidence for a commit: it touched a file that usually changes
/// together with an anchored one.
pub const CO_CHANGE_EVIDENCE: f32 = 0.2;

/// The evidence of the `n`-th newest commit touching an anchored file.
pub fn touch_evidence(n: usize) -> f32 {
    TOUCH_EVIDENCE / (1.0 + n as f32 * 0.25)
}

/// Goal words that ask about history itself: the answer is commits, not
/// only code. Checked on the goal's plain words (the search drops `why`
/// and `when` as stopwords).
const HISTORY_WORDS: &[&str] = &[
    "why",
    "history",
    "commit",
    "commits",
    "changed",
    "change",
    "changes",
    "introduced",
    "regression",
    "regressed",
    "broke",
    "broken",
    "revert",
    "reverted",
    "when",
    "previously",
    "before",
    "blame",
    "log",
];

/// Whether `goal` asks about history (one of the history words above, such as
/// "commit", "changed" or "blame", in any case).
pub fn asks_about_history(goal: &str) -> bool {
    goal.split(|c: char| !c.is_alphanumeric())
        .any(|w| HISTORY_WORDS.iter().any(|h| h.eq_ignore_ascii_case(w)))
}

/// A ranked commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Its position in the index.
    pub pos: u32,
    /// Its score in [0, 1].
    pub score: f32,
    /// The changed path whose hunks the frame shows, when one is evidence
    /// (an anchored file, or a path the goal's words name).
    pub path: Option<String>,
}

/// Anchor evidence gathered for one request: per commit position, the
/// strongest evidence and the anchored path it is about.
#[derive(Debug, Default)]
pub struct AnchorEvidence {
    /// Position → (evidence, path).
    pub by_commit: HashMap<u32, (f32, String)>,
}

impl AnchorEvidence {
    /// Record `evidence` for commit `pos` about `path` (the strongest wins).
    pub fn add(&mut self, pos: u32, evidence: f32, path: &str) {
        let e = self.by_commit.entry(pos).or_insert((0.0, String::new()));
        if evidence > e.0 {
            *e = (evidence, path.to_owned());
        }
    }
}

/// The ranking of one request: the best candidates, and how many commits
/// had any evidence at all.
#[derive(Debug, Default)]
pub struct Ranked {
    /// At most the `keep` best candidates, best first (ties: newer first).
    pub top: Vec<Candidate>,
    /// Eligible commits with any evidence, kept or not.
    pub total: usize,
}

/// Rank every eligible commit with any evidence and keep the `keep` best.
/// Scores are computed for all (cheap arithmetic); the path a frame shows
/// is chosen only for the kept ones (it tokenizes every changed path), so
/// a goal whose words match most of a large history stays fast.
pub fn rank(
    index: &Searchable,
    words: &[String],
    anchors: &AnchorEvidence,
    eligible: &dyn Fn(u32) -> bool,
    keep: usize,
) -> Ranked {
    let bm25 = index.bm25(words);
    let best = bm25.iter().map(|&(_, s)| s).fold(0.0f32, f32::max);
    let n = index.len().max(1) as f32;
    let word_score = |pos: u32| {
        bm25.binary_search_by_key(&pos, |&(p, _)| p)
            .ok()
            .map_or(0.0, |i| if best > 0.0 { bm25[i].1 / best } else { 0.0 })
    };
    let mut positions: Vec<u32> = bm25.iter().map(|&(p, _)| p).collect();
    positions.extend(anchors.by_commit.keys().copied());
    positions.sort_unstable();
    positions.dedup();
    let mut scored: Vec<(u32, f32)> = positions
        .into_iter()
        .filter(|&p| eligible(p))
        .map(|pos| {
            let a = anchors.by_commit.get(&pos).map_or(0.0, |(e, _)| *e);
            let recency = 1.0 - pos as f32 / n;
            let score =
                (WORDS_WEIGHT * word_score(pos) + ANCHOR_WEIGHT * a + RECENCY_WEIGHT * recency)
                    .clamp(0.0, 1.0);
            (pos, score)
        })
        .collect();
    let total = scored.len();
    let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0));
    if keep < scored.len() {
        if keep == 0 {
            scored.clear();
        } else {
            scored.select_nth_unstable_by(keep - 1, order);
            scored.truncate(keep);
        }
    }
    scored.sort_by(order);
    let top = scored
        .into_iter()
        .filter_map(|(pos, score)| {
            let c = index.commit(pos)?;
            let anchored = anchors.by_commit.get(&pos).map(|(_, p)| p.as_str());
            let path = anchored
                .filter(|p| c.paths.iter().any(|c| c.path == *p))
                .map(str::to_owned)
                .or_else(|| best_path(c, words));
            Some(Candidate { pos, score, path })
        })
        .collect();
    Ranked { top, total }
}

/// The changed path of `c` whose name shares the most of the goal's words
/// (at least one), shortest first on a tie.
fn best_path(c: &crate::record::CommitRecord, words: &[String]) -> Option<String> {
    if words.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for p in &c.paths {
        if p.change == crate::record::Change::Deleted {
            continue;
        }
        let mut hits = 0usize;
        let mut seen: Vec<String> = Vec::new();
        tokens(&p.path, |t| {
            if !seen.iter().any(|s| s == t) && words.iter().any(|w| w == t) {
                hits += 1;
                seen.push(t.to_owned());
            }
        });
        if hits == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((h, b)) => hits > h || (hits == h && p.path.len() < b.len()),
        };
        if better {
            best = Some((hits, p.path.as_str()));
        }
    }
    best.map(|(_, p)| p.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Change, ChangedPath, CommitRecord};
    use crate::store::Snapshot;

    fn commit(n: usize, subject: &str, path: &str) -> CommitRecord {
        CommitRecord {
            id: format!("{n:040x}"),
            author: "a".into(),
            author_time: 1_000 - n as i64,
            commit_time: 1_000 - n as i64,
            subject: subject.into(),
            body: String::new(),
            parents: 1,
            paths: vec![ChangedPath {
                path: path.into(),
                from: None,
                change: Change::Modified,
            }],
            withheld: 0,
            refused: false,
            boundary: false,
        }
    }

    fn index() -> Searchable {
        let commits = (0..40)
            .map(|n| {
                let subject = if n % 3 == 0 {
                    "parser fix parser"
                } else {
                    "parser docs"
                };
                commit(n, subject, &format!("src/parser{n}.rs"))
            })
            .collect();
        Searchable::new(Snapshot {
            head: String::new(),
            truncated: false,
            shallow: false,
            unreadable: 0,
            commits,
        })
    }

    #[test]
    fn keeping_a_few_keeps_the_best_of_the_full_ranking_and_counts_all() {
        let index = index();
        let words = vec!["parser".to_owned(), "fix".to_owned()];
        let none = AnchorEvidence::default();
        let all = rank(&index, &words, &none, &|_| true, usize::MAX);
        let few = rank(&index, &words, &none, &|_| true, 5);
        assert_eq!(all.total, 40);
        assert_eq!(few.total, 40, "the commits not kept still count");
        assert_eq!(few.top.len(), 5);
        assert_eq!(few.top, all.top[..5].to_vec());
        // The best are the commits whose subject says "fix", newest first.
        assert!(few.top.iter().all(|c| c.pos % 3 == 0), "{:?}", few.top);
        assert_eq!(few.top[0].pos, 0);
        assert_eq!(few.top[0].path.as_deref(), Some("src/parser0.rs"));
        assert!(rank(&index, &words, &none, &|_| true, 0).top.is_empty());
    }

    #[test]
    fn ineligible_commits_are_neither_kept_nor_counted() {
        let index = index();
        let words = vec!["parser".to_owned()];
        let none = AnchorEvidence::default();
        let r = rank(&index, &words, &none, &|p| p >= 10, 100);
        assert_eq!(r.total, 30);
        assert!(r.top.iter().all(|c| c.pos >= 10));
    }
}
