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

/// Rank every eligible commit with any evidence, best first (ties: newer first).
pub fn rank(
    index: &Searchable,
    words: &[String],
    anchors: &AnchorEvidence,
    eligible: &dyn Fn(u32) -> bool,
) -> Vec<Candidate> {
    let bm25 = index.bm25(words);
    let best = bm25.values().copied().fold(0.0f32, f32::max);
    let n = index.len().max(1) as f32;
    let mut positions: Vec<u32> = bm25.keys().copied().collect();
    positions.extend(anchors.by_commit.keys().copied());
    positions.sort_unstable();
    positions.dedup();
    let mut out: Vec<Candidate> = positions
        .into_iter()
        .filter(|&p| eligible(p))
        .filter_map(|pos| {
            let c = index.commit(pos)?;
            let w = bm25
                .get(&pos)
                .map_or(0.0, |s| if best > 0.0 { s / best } else { 0.0 });
            let (a, anchored) = anchors
                .by_commit
                .get(&pos)
                .map_or((0.0, None), |(e, p)| (*e, Some(p.clone())));
            let recency = 1.0 - pos as f32 / n;
            let score =
                (WORDS_WEIGHT * w + ANCHOR_WEIGHT * a + RECENCY_WEIGHT * recency).clamp(0.0, 1.0);
            let path = anchored
                .filter(|p| c.paths.iter().any(|c| &c.path == p))
                .or_else(|| best_path(c, words));
            Some(Candidate { pos, score, path })
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.pos.cmp(&b.pos)));
    out
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
