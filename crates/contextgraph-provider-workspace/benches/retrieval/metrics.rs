//! File-level scoring of a ranked list for the retrieval benchmark: the
//! frames collapsed to distinct files, then NDCG@10, recall@5 and MRR@10 with
//! binary gains. Shared by `retrieval_ndcg` and its tests.

use std::fmt;

/// Distinct files scored by NDCG and MRR.
pub const CUTOFF: usize = 10;
/// Distinct files scored by recall.
pub const RECALL_AT: usize = 5;

/// The query categories, in report order.
pub const CATEGORIES: [Category; 3] =
    [Category::Symbol, Category::Semantic, Category::Architecture];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Symbol,
    Semantic,
    Architecture,
}

impl Category {
    /// The category named `s` in a queries file.
    pub fn parse(s: &str) -> Option<Category> {
        match s {
            "symbol" => Some(Category::Symbol),
            "semantic" => Some(Category::Semantic),
            "architecture" => Some(Category::Architecture),
            _ => None,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Category::Symbol => "symbol",
            Category::Semantic => "semantic",
            Category::Architecture => "architecture",
        })
    }
}

/// The distinct files of ranked frame ids (`path#local`), first occurrence kept.
pub fn distinct_files(ids: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let path = id.split('#').next().unwrap_or_default().to_owned();
        if !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// One query's scores.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scores {
    /// NDCG@10.
    pub ndcg: f64,
    /// recall@5.
    pub recall: f64,
    /// Reciprocal rank of the first answer within 10 (0 if none).
    pub rr: f64,
}

impl Scores {
    /// Adds `o` to the sums.
    pub fn add(&mut self, o: Scores) {
        self.ndcg += o.ndcg;
        self.recall += o.recall;
        self.rr += o.rr;
    }

    /// The means of sums over `n` items.
    pub fn divided(self, n: usize) -> Scores {
        let n = n.max(1) as f64;
        Scores {
            ndcg: self.ndcg / n,
            recall: self.recall / n,
            rr: self.rr / n,
        }
    }
}

/// How a ranked file is matched against an answer path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathMatch {
    /// The two paths are equal (our projects: answers are written relative
    /// to the project root the provider indexes).
    Exact,
    /// Equal, or one ends with `/` + the other (the third-party set's rule:
    /// its targets are written relative to the repository root or to the
    /// indexed subdirectory, and semble scores them that way).
    Suffix,
}

impl PathMatch {
    /// Whether ranked file `file` matches answer `target`.
    pub fn matches(self, file: &str, target: &str) -> bool {
        let ends = |long: &str, short: &str| {
            long.len() > short.len()
                && long.ends_with(short)
                && long.as_bytes()[long.len() - short.len() - 1] == b'/'
        };
        file == target || (self == PathMatch::Suffix && (ends(file, target) || ends(target, file)))
    }
}

/// The 1-based rank of each answer: the position of the first ranked file
/// that matches it (None when no file does).
pub fn answer_ranks(
    ranked: &[String],
    answers: &[String],
    matching: PathMatch,
) -> Vec<Option<usize>> {
    answers
        .iter()
        .map(|a| {
            ranked
                .iter()
                .position(|f| matching.matches(f, a))
                .map(|i| i + 1)
        })
        .collect()
}

/// File-level NDCG@10, recall@5 and reciprocal rank@10 of `ranked` against
/// `answers` (binary gains), paths compared exactly.
pub fn score(ranked: &[String], answers: &[String]) -> Scores {
    score_with(ranked, answers, PathMatch::Exact)
}

/// [`score`] under `matching`. Each answer has the rank of the first file
/// matching it; the gain at rank r is 1 when some answer has rank r (a file
/// matching two answers counts once, a second file matching an answer
/// already found counts nothing), as semble scores its set. With exact
/// matching over distinct files this is the plain per-file binary gain.
pub fn score_with(ranked: &[String], answers: &[String], matching: PathMatch) -> Scores {
    let mut ranks: Vec<usize> = answer_ranks(ranked, answers, matching)
        .into_iter()
        .flatten()
        .collect();
    let found = ranks.iter().filter(|&&r| r <= RECALL_AT).count();
    ranks.sort_unstable();
    ranks.dedup();
    let dcg: f64 = ranks
        .iter()
        .filter(|&&r| r <= CUTOFF)
        .map(|&r| 1.0 / ((r + 1) as f64).log2())
        .sum();
    let ideal: f64 = (0..answers.len().min(CUTOFF))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let rr = ranks
        .first()
        .filter(|&&r| r <= CUTOFF)
        .map_or(0.0, |&r| 1.0 / r as f64);
    Scores {
        ndcg: if ideal > 0.0 { dcg / ideal } else { 0.0 },
        recall: found as f64 / answers.len().max(1) as f64,
        rr,
    }
}
