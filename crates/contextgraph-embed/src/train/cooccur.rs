//! Pass two: weighted co-occurrence counts and chunk frequencies.

use rustc_hash::FxHashMap;

use super::align::{for_each_aligned_pair, LineClassifier, LineKind};
use super::vocab::Vocab;
use crate::tokenize::for_each_token;

/// Symmetric co-occurrence counts between vocabulary tokens, plus how many
/// fixed-size chunks each token occurs in.
#[derive(Debug)]
pub struct Cooccurrence {
    window: usize,
    harmonic: bool,
    chunk_lines: usize,
    /// `(min_id << 32) | max_id` to summed weight; each unordered pair once.
    pairs: FxHashMap<u64, f32>,
    chunk_df: Vec<u32>,
    /// The chunk number in which each token was last counted for `chunk_df`.
    last_chunk: Vec<u64>,
    chunks: u64,
    ids: Vec<u32>,
    /// Weight of doc-comment ↔ documented-code pairs (0: none); see
    /// [`super::align`].
    align_weight: f32,
    /// Each line's kind and token range in `ids`, for alignment.
    lines: Vec<(LineKind, usize, usize)>,
}

impl Cooccurrence {
    /// Counts for a vocabulary of `vocab_len` tokens; a neighbour at
    /// distance `d <= window` adds `1/d` if `harmonic`, else 1; chunks of `chunk_lines` lines are
    /// the documents of the pooling weights' frequencies.
    pub fn new(vocab_len: usize, window: usize, chunk_lines: usize, harmonic: bool) -> Self {
        Self {
            window: window.max(1),
            harmonic,
            chunk_lines: chunk_lines.max(1),
            pairs: FxHashMap::default(),
            chunk_df: vec![0; vocab_len],
            last_chunk: vec![u64::MAX; vocab_len],
            chunks: 0,
            ids: Vec::new(),
            align_weight: 0.0,
            lines: Vec::new(),
        }
    }

    /// Also pairs each doc comment's words with the code it documents,
    /// each pair weighing `weight / sqrt(code tokens)` (see
    /// [`super::align`]); 0 turns it off.
    pub fn with_alignment(mut self, weight: f32) -> Self {
        self.align_weight = weight.max(0.0);
        self
    }

    /// Counts one document. Tokens outside the vocabulary are skipped
    /// before windowing, so the window spans known tokens only; windows do
    /// not cross documents.
    pub fn add(&mut self, text: &str, vocab: &Vocab) {
        self.ids.clear();
        self.lines.clear();
        let mut classifier = LineClassifier::default();
        for (n, line) in text.lines().enumerate() {
            let start = self.ids.len();
            if n.is_multiple_of(self.chunk_lines) {
                self.chunks += 1;
            }
            let chunk = self.chunks;
            for_each_token(line, |token| {
                if let Some(&id) = vocab.ids.get(token) {
                    self.ids.push(id);
                    let slot = &mut self.last_chunk[id as usize];
                    if *slot != chunk {
                        *slot = chunk;
                        self.chunk_df[id as usize] += 1;
                    }
                }
            });
            if self.align_weight > 0.0 {
                let kind = classifier.classify(line);
                self.lines.push((kind, start, self.ids.len()));
            }
        }
        for (i, &a) in self.ids.iter().enumerate() {
            for (d, &b) in self.ids[i + 1..].iter().take(self.window).enumerate() {
                if a == b {
                    continue;
                }
                let key = (u64::from(a.min(b)) << 32) | u64::from(a.max(b));
                let weight = if self.harmonic {
                    1.0 / (d + 1) as f32
                } else {
                    1.0
                };
                *self.pairs.entry(key).or_insert(0.0) += weight;
            }
        }
        if self.align_weight > 0.0 {
            let pairs = &mut self.pairs;
            for_each_aligned_pair(&self.lines, &self.ids, self.align_weight, |a, b, w| {
                let key = (u64::from(a.min(b)) << 32) | u64::from(a.max(b));
                *pairs.entry(key).or_insert(0.0) += w;
            });
        }
    }

    /// Number of distinct co-occurring pairs so far.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// Number of chunks seen.
    pub fn chunk_count(&self) -> u64 {
        self.chunks
    }

    /// Chunks each token occurred in.
    pub fn chunk_df(&self) -> &[u32] {
        &self.chunk_df
    }

    /// The summed weight of an unordered pair.
    pub fn get(&self, a: u32, b: u32) -> f32 {
        let key = (u64::from(a.min(b)) << 32) | u64::from(a.max(b));
        self.pairs.get(&key).copied().unwrap_or(0.0)
    }

    /// All pairs as `(a, b, weight)` with `a < b`, in no particular order.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, u32, f32)> + '_ {
        self.pairs
            .iter()
            .map(|(&k, &w)| ((k >> 32) as u32, k as u32, w))
    }
}

#[cfg(test)]
mod tests {
    use super::Cooccurrence;
    use crate::train::Vocab;

    fn vocab(tokens: &[&str]) -> Vocab {
        Vocab::from_ranked(tokens.iter().map(|t| (t.to_string(), 1)).collect())
    }

    #[test]
    fn weights_neighbours_by_inverse_distance_within_the_window() {
        let v = vocab(&["aa", "bb", "cc", "dd"]);
        let mut c = Cooccurrence::new(v.len(), 2, 50, true);
        c.add("aa bb cc dd", &v);
        assert_eq!(c.get(0, 1), 1.0);
        assert_eq!(c.get(0, 2), 0.5);
        assert_eq!(c.get(0, 3), 0.0, "dd is three away, outside the window");
        assert_eq!(c.get(2, 1), 1.0, "pairs are unordered");
        let mut uniform = Cooccurrence::new(v.len(), 2, 50, false);
        uniform.add("aa bb cc dd", &v);
        assert_eq!(uniform.get(0, 2), 1.0);
    }

    #[test]
    fn skips_unknown_tokens_and_self_pairs_and_does_not_cross_documents() {
        let v = vocab(&["aa", "bb"]);
        let mut c = Cooccurrence::new(v.len(), 1, 50, true);
        c.add("aa zz aa", &v);
        c.add("bb", &v);
        assert_eq!(c.pair_count(), 0);
    }

    #[test]
    fn alignment_pairs_a_doc_comment_with_the_signature_beyond_the_window() {
        let v = vocab(&["aa", "bb", "cc", "dd"]);
        let text = "/// aa bb cc\nfn dd() {}";
        let mut plain = Cooccurrence::new(v.len(), 1, 50, true);
        plain.add(text, &v);
        assert_eq!(plain.get(0, 3), 0.0, "aa is three tokens from dd");
        let mut aligned = Cooccurrence::new(v.len(), 1, 50, true).with_alignment(1.0);
        aligned.add(text, &v);
        assert_eq!(aligned.get(0, 3), 1.0, "one code token: weight 1/sqrt(1)");
        assert_eq!(aligned.get(0, 1), 1.0, "the window's pairs are unchanged");
    }

    #[test]
    fn counts_chunk_frequency_once_per_chunk() {
        let v = vocab(&["aa", "bb"]);
        let mut c = Cooccurrence::new(v.len(), 1, 2, true);
        c.add("aa aa\naa\nbb\naa", &v);
        assert_eq!(c.chunk_count(), 2);
        assert_eq!(c.chunk_df(), [2, 1]);
    }
}
