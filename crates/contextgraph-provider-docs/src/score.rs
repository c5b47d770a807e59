//! Relevance: a small BM25 over heading sections, with heading matches
//! weighted above body matches, normalised so the best candidate scores 1.
//!
//! Why BM25 and not plain term overlap: overlap rewards long sections that
//! mention everything once; BM25 saturates repeated terms and discounts
//! length, so a short section *about* retries outranks a long changelog that
//! mentions them. Why normalise by the best candidate: F1 asks for a score
//! in [0, 1] and hosts compare providers' scores, so the provider's own best
//! answer to a query reads as 1 and the rest relative to it.
//!
//! Terms are lowercase runs of letters and digits in any script, so
//! `Über` matches `über` and `日本語` is one term; a short list of English
//! function words is ignored so "how do I configure the retry policy?" is
//! matched on `configure`, `retry` and `policy`.

/// Heading terms count this many times a body term (a section *titled*
/// "Retry policy" is about it; one that mentions it may not be).
pub const TITLE_WEIGHT: f64 = 3.0;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;

/// Words too common to say anything about relevance.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "if", "in", "is", "it", "me", "my", "of", "on", "or", "should", "so", "that", "the",
    "this", "to", "was", "we", "what", "when", "where", "which", "why", "will", "with", "you",
];

/// The alphanumeric runs of `text`, as written.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// The lowercase form of each character of `word`. Character by character
/// (no word-final sigma rule), so a term hashed while indexing and the same
/// term typed in a query always agree.
fn lowercase_chars(word: &str) -> impl Iterator<Item = char> + '_ {
    word.chars().flat_map(char::to_lowercase)
}

/// The terms of `text`: lowercase alphanumeric runs, in order, repeats kept.
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text).map(|w| lowercase_chars(w).collect())
}

/// The distinct, meaningful terms of a query's match text (stopwords dropped,
/// sorted, deduplicated). Empty when the text says nothing searchable.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = terms(text)
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A term's 64-bit FNV-1a hash. Sections store hashes, not strings: a
/// lookup is then an integer binary search over one contiguous array (no
/// string compares chasing pointers), and the index holds 16 bytes per
/// distinct term instead of a heap string. A collision (about 1 in 2^64 per
/// pair) could only nudge a relevance score, never what a frame contains.
/// It lowercases as it hashes, so indexing a section allocates nothing per word.
fn term_hash(word: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    if word.is_ascii() {
        // The common case, and for ASCII `char::to_lowercase` is exactly this.
        word.bytes().for_each(|b| eat(b.to_ascii_lowercase()));
    } else {
        let mut buf = [0u8; 4];
        for c in lowercase_chars(word) {
            c.encode_utf8(&mut buf).bytes().for_each(&mut eat);
        }
    }
    hash
}

/// One section's term statistics, computed once when the section is indexed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SectionTerms {
    /// `(term hash, weighted frequency)`, sorted by hash.
    weighted: Vec<(u64, f64)>,
    /// Weighted length: `TITLE_WEIGHT × title terms + body terms`.
    length: f64,
}

impl SectionTerms {
    /// Statistics of a section with heading `title` and text `body`.
    pub fn new(title: &str, body: &str) -> Self {
        let mut all: Vec<(u64, f64)> = words(title)
            .map(|w| (term_hash(w), TITLE_WEIGHT))
            .chain(words(body).map(|w| (term_hash(w), 1.0)))
            .collect();
        let length = all.iter().map(|&(_, w)| w).sum();
        all.sort_unstable_by_key(|&(h, _)| h);
        let mut weighted: Vec<(u64, f64)> = Vec::with_capacity(all.len() / 2);
        for (h, w) in all {
            match weighted.last_mut() {
                Some((last, total)) if *last == h => *total += w,
                _ => weighted.push((h, w)),
            }
        }
        SectionTerms { weighted, length }
    }

    fn frequency(&self, term: u64) -> f64 {
        self.weighted
            .binary_search_by_key(&term, |&(t, _)| t)
            .map_or(0.0, |i| self.weighted[i].1)
    }
}

/// Raw BM25 scores of `sections` for `query` (from [`query_terms`]), in the
/// same order; document frequencies are taken over `sections` themselves.
/// Raw scores are ≥ 0 and comparable only within one call.
pub fn bm25(query: &[String], sections: &[&SectionTerms]) -> Vec<f64> {
    let n = sections.len() as f64;
    let mut scores = vec![0.0; sections.len()];
    if sections.is_empty() || query.is_empty() {
        return scores;
    }
    let average = (sections.iter().map(|s| s.length).sum::<f64>() / n).max(1.0);
    for term in query {
        let term = term_hash(term);
        let freqs: Vec<f64> = sections.iter().map(|s| s.frequency(term)).collect();
        let df = freqs.iter().filter(|&&f| f > 0.0).count() as f64;
        if df == 0.0 {
            continue;
        }
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for ((score, tf), s) in scores.iter_mut().zip(&freqs).zip(sections) {
            if *tf > 0.0 {
                let norm = K1 * (1.0 - B + B * s.length / average);
                *score += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
    }
    scores
}

/// Scale raw scores into [0, 1] by the best one, so the best candidate scores
/// 1 (F1). All-zero (or non-finite) input maps to all zeros.
pub fn normalise(raw: &[f64]) -> Vec<f32> {
    let best = raw
        .iter()
        .copied()
        .filter(|s| s.is_finite())
        .fold(0.0, f64::max);
    raw.iter()
        .map(|&s| {
            if best > 0.0 && s.is_finite() && s > 0.0 {
                ((s / best).clamp(0.0, 1.0)) as f32
            } else {
                0.0
            }
        })
        .collect()
}
