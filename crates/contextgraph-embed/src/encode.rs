//! Text to vector: tokenize, look up, weighted mean, L2-normalise.
//!
//! Mean pooling of static vectors is what makes this fast enough to run on
//! every chunk at index time and on every query: no matrix products, one
//! multiply-add per dimension per known token. The per-token weight (an
//! inverse document frequency in the shipped model) keeps words that occur
//! everywhere (`the`, `self`, `let`) from pulling every text towards the
//! same point. Normalising makes the dot product a cosine.

use crate::model::StaticModel;
use crate::tokenize::for_each_token;

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
        for_each_token(text, |token| {
            if let Some(&id) = self.index.get(token) {
                let id = id as usize;
                let w = self.weights[id];
                let row = &self.vectors[id * self.dim..(id + 1) * self.dim];
                out.iter_mut().zip(row).for_each(|(o, r)| *o += w * r);
            }
        });
        normalize(out)
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
