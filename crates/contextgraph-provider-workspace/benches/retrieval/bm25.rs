//! A plain BM25 baseline over whole files, for the retrieval benchmark:
//! what the provider's ranking has to beat. Self-contained (its own walk
//! and tokenizer), so it keeps measuring the same thing however the
//! provider's internals change.
//!
//! Files: every regular file under the root that is UTF-8 text without NUL
//! bytes and at most 1 MiB, hidden directories and `node_modules` skipped.
//! Tokens: lower-cased runs of letters and digits, each also split into its
//! camelCase and snake_case parts (so `buildURL` yields `buildurl`, `build`,
//! `url`). Parameters k1 = 1.2, b = 0.75.

use std::collections::HashMap;
use std::path::Path;

const MAX_FILE_BYTES: u64 = 1 << 20;
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A file-level BM25 index of one project.
pub struct Bm25 {
    files: Vec<String>,
    /// Per file: term -> count.
    counts: Vec<HashMap<String, u32>>,
    lengths: Vec<f64>,
    doc_freq: HashMap<String, u32>,
    avg_len: f64,
}

impl Bm25 {
    /// Index every text file under `root` (paths kept relative to it, `/`-separated).
    pub fn build(root: &Path) -> Bm25 {
        let mut paths = Vec::new();
        collect(root, root, &mut paths);
        paths.sort();
        let mut index = Bm25 {
            files: Vec::new(),
            counts: Vec::new(),
            lengths: Vec::new(),
            doc_freq: HashMap::new(),
            avg_len: 0.0,
        };
        for (rel, abs) in paths {
            let Ok(bytes) = std::fs::read(&abs) else {
                continue;
            };
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            if text.contains('\0') {
                continue;
            }
            let mut counts: HashMap<String, u32> = HashMap::new();
            let mut len = 0usize;
            for t in tokens(&text) {
                *counts.entry(t).or_default() += 1;
                len += 1;
            }
            for t in counts.keys() {
                *index.doc_freq.entry(t.clone()).or_default() += 1;
            }
            index.files.push(rel);
            index.counts.push(counts);
            index.lengths.push(len as f64);
        }
        let n = index.lengths.len().max(1) as f64;
        index.avg_len = (index.lengths.iter().sum::<f64>() / n).max(1.0);
        index
    }

    /// The files ranked by BM25 score for `query`, best first, at most `limit`.
    pub fn rank(&self, query: &str, limit: usize) -> Vec<String> {
        let mut terms: Vec<String> = tokens(query).collect();
        terms.sort();
        terms.dedup();
        let n = self.files.len() as f64;
        let mut scored: Vec<(f64, usize)> = Vec::new();
        for (i, counts) in self.counts.iter().enumerate() {
            let mut score = 0.0;
            for t in &terms {
                let Some(&tf) = counts.get(t) else {
                    continue;
                };
                let df = f64::from(self.doc_freq.get(t).copied().unwrap_or(0));
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                let tf = f64::from(tf);
                let norm = K1 * (1.0 - B + B * self.lengths[i] / self.avg_len);
                score += idf * tf * (K1 + 1.0) / (tf + norm);
            }
            if score > 0.0 {
                scored.push((score, i));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .take(limit)
            .map(|(_, i)| self.files[i].clone())
            .collect()
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, std::path::PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !name.starts_with('.') && name != "node_modules" {
                collect(root, &path, out);
            }
        } else if kind.is_file() {
            let small = entry
                .metadata()
                .map(|m| m.len() <= MAX_FILE_BYTES)
                .unwrap_or(false);
            if let (true, Ok(rel)) = (small, path.strip_prefix(root)) {
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((rel, path));
            }
        }
    }
}

/// Lower-cased words and their camelCase / snake_case parts.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .flat_map(|word| {
            let mut out = Vec::new();
            let parts = split_identifier(word);
            if parts.len() > 1 {
                out.extend(parts.iter().map(|p| p.to_lowercase()));
            }
            let whole: String = word.chars().filter(|c| *c != '_').collect();
            if !whole.is_empty() {
                out.push(whole.to_lowercase());
            }
            out
        })
}

/// `parseHTTPRequest_v2` -> `parse`, `HTTP`, `Request`, `v2`.
fn split_identifier(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0;
        for k in 1..chars.len() {
            let (i, c) = chars[k];
            let prev = chars[k - 1].1;
            let next_lower = chars.get(k + 1).is_some_and(|(_, n)| n.is_lowercase());
            let boundary = (c.is_uppercase() && (prev.is_lowercase() || prev.is_ascii_digit()))
                || (c.is_uppercase() && prev.is_uppercase() && next_lower);
            if boundary {
                parts.push(&piece[start..i]);
                start = i;
            }
        }
        parts.push(&piece[start..]);
    }
    parts
}
