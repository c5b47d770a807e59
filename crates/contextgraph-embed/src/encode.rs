//! Text to vector: tokenize, look up, weighted mean, L2-normalise.
//!
//! Mean pooling of static vectors is what makes this fast enough to run on
//! every chunk at index time and on every query: no matrix products, one
//! multiply-add per dimension per known token. The per-token weight (an
//! inverse document frequency in the shipped model) keeps words that occur
//! everywhere (`the`, `self`, `let`) from pulling every text towards the
//! same point. Normalising makes the dot product a cosine.

use crate::model::StaticModel;
use crate::tokenize::{for_each_token, for_each_token_at};

/// A unit-length text vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding(Vec<f32>);

impl Embedding {
    /// Wraps a vector, normalising it; `None` for a zero or non-finite
    /// vector (which has no direction).
    pub fn from_vec(mut v: Vec<f32>) -> Option<Self> {
        normalize(&mut v).then_some(Self(v))
    }

    /// The components.
    pub fn as_slice(&self) -> &[f32] {
        &self.0
    }

    /// Cosine similarity with another embedding (both are unit length, so
    /// this is their dot product), in `[-1, 1]`.
    pub fn cosine(&self, other: &Embedding) -> f32 {
        dot(&self.0, &other.0)
    }

    /// The components, by value.
    pub fn into_vec(self) -> Vec<f32> {
        self.0
    }
}

/// The dot product of two equally long slices (extra components of the
/// longer one are ignored).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Cosine similarity of two vectors of any length; 0 when either is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (na, nb) = (dot(a, a).sqrt(), dot(b, b).sqrt());
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot(a, b) / (na * nb)
}

/// Scales `v` to unit length; false (and `v` untouched) when it is zero or
/// not finite.
fn normalize(v: &mut [f32]) -> bool {
    let norm = dot(v, v).sqrt();
    if !(norm.is_finite() && norm > 0.0) {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    true
}

impl StaticModel {
    /// The embedding of `text`, or `None` when no token of it is in the
    /// vocabulary (or all its known tokens have zero weight).
    pub fn encode(&self, text: &str) -> Option<Embedding> {
        let mut out = vec![0.0; self.dim];
        self.encode_into(text, &mut out).then_some(Embedding(out))
    }

    /// Writes the embedding of `text` into `out` (length [`Self::dim`]) and
    /// returns true, or returns false and leaves `out` zeroed when no known
    /// token carries weight. Reusing `out` avoids an allocation per text.
    ///
    /// A token repeated in the text counts each time, so a chunk about
    /// tokens leans towards "token" more than one that mentions it once.
    pub fn encode_into(&self, text: &str, out: &mut [f32]) -> bool {
        out.iter_mut().for_each(|x| *x = 0.0);
        if out.len() != self.dim {
            return false;
        }
        self.add_text(text, out);
        normalize(out)
    }

    /// Adds the weighted vectors of `text`'s known tokens, in order, to
    /// `out` (length [`Self::dim`]): the sum [`Self::encode_into`] pools,
    /// in pieces. Text that ends where a token must end (at a newline, a
    /// space) adds what it adds inside a longer text, so a caller can
    /// start several texts from one shared prefix's sum (the same
    /// operations in the same order give the same bits).
    pub fn add_text(&self, text: &str, out: &mut [f32]) {
        for_each_token(text, |token| {
            if let Some(&id) = self.index.get(token) {
                self.add_row(id, out);
            }
        });
    }

    /// Calls `emit` with the row and start byte of each token of `text`
    /// that is in the vocabulary, in order (see
    /// [`tokenize::for_each_token_at`](crate::tokenize::for_each_token_at)):
    /// the tokens a caller can add later with [`Self::add_rows`] without
    /// tokenizing or looking them up again.
    pub fn for_each_known_token(&self, text: &str, mut emit: impl FnMut(u32, usize)) {
        for_each_token_at(text, |token, at| {
            if let Some(&id) = self.index.get(token) {
                emit(id, at);
            }
        });
    }

    /// Adds the weighted vectors of rows `ids` (from
    /// [`Self::for_each_known_token`]), in order, to `out`: what
    /// [`Self::add_text`] adds for the text they came from. Ids out of range
    /// add nothing.
    pub fn add_rows(&self, ids: &[u32], out: &mut [f32]) {
        // Four rows per pass over `out` (see `matrix.rs`), in the same
        // order and with the same bits as one row at a time.
        self.vectors.add_rows(&self.weights, self.dim, ids, out);
    }

    /// Turns a sum built by [`Self::add_text`] and [`Self::add_rows`] (from
    /// zeros) into the embedding [`Self::encode_into`] gives for the
    /// concatenated text: true when it has a direction, else false with
    /// `out` left as it is.
    pub fn finish_sum(out: &mut [f32]) -> bool {
        normalize(out)
    }

    /// `out += weight × row` for one token: the only arithmetic pooling
    /// does, kept in one place (`matrix.rs`) so every path adds in the
    /// same order.
    #[inline]
    fn add_row(&self, id: u32, out: &mut [f32]) {
        self.vectors.add_row(&self.weights, self.dim, id, out);
    }

    /// The `k` tokens whose vectors are closest (by cosine) to `token`'s,
    /// most similar first, without `token` itself; empty when `token` is
    /// not in the vocabulary. A linear scan: for inspecting a model, not for
    /// serving queries.
    pub fn nearest_tokens(&self, token: &str, k: usize) -> Vec<(String, f32)> {
        let Some(id) = self.token_id(token) else {
            return Vec::new();
        };
        let Some(query) = self.row(id) else {
            return Vec::new();
        };
        let mut scored: Vec<(usize, f32)> = (0..self.tokens.len())
            .filter(|&other| other != id)
            .filter_map(|other| Some((other, cosine(query, self.row(other)?))))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored
            .into_iter()
            .take(k)
            .map(|(other, sim)| (self.tokens[other].to_string(), sim))
            .collect()
    }

    /// Cosine similarity between the vectors of two tokens (as the tokenizer
    /// normalises them), or `None` if either is not in the vocabulary.
    pub fn token_similarity(&self, a: &str, b: &str) -> Option<f32> {
        Some(cosine(
            self.row(self.token_id(a)?)?,
            self.row(self.token_id(b)?)?,
        ))
    }
}
