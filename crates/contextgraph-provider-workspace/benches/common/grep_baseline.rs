//! What the two quality benches (`retrieval_quality`, `question_quality`)
//! share: the grep baseline they compare the provider with, and how a
//! ranked list is scored. Included by `#[path]`, since bench targets cannot
//! share a module otherwise.
//!
//! The baseline ranks lines by how many distinct query words of three or
//! more letters they contain (case-insensitive, like `grep -ciF` per word),
//! most words first, then in file and line order.

/// The query's words as the baseline searches for them, lowercased.
pub fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect()
}

/// `(file, line)` of every line holding a query word, best first. `files`
/// yields each file's lines, already lowercased.
pub fn ranked_lines<'a>(
    files: impl Iterator<Item = &'a [String]>,
    query: &str,
) -> Vec<(usize, usize)> {
    let words = query_words(query);
    let mut hits: Vec<(usize, usize, usize)> = Vec::new();
    for (fi, lines) in files.enumerate() {
        for (li, line) in lines.iter().enumerate() {
            let n = words.iter().filter(|w| line.contains(w.as_str())).count();
            if n > 0 {
                hits.push((n, fi, li));
            }
        }
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    hits.into_iter().map(|(_, fi, li)| (fi, li)).collect()
}

/// The 0-based position of the first answer among the top ten of `ranked`.
pub fn answer_rank<T>(ranked: &[T], is_answer: impl Fn(&T) -> bool) -> Option<usize> {
    ranked.iter().take(10).position(is_answer)
}

/// (recall@5, reciprocal rank@10) of one query from [`answer_rank`].
pub fn recall5_and_rr(rank: Option<usize>) -> (f64, f64) {
    match rank {
        Some(i) => (if i < 5 { 1.0 } else { 0.0 }, 1.0 / (i as f64 + 1.0)),
        None => (0.0, 0.0),
    }
}
