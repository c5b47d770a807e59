//! Counts to positive pointwise mutual information.
//!
//! `PMI(w, c) = ln( P(w, c) / (P(w) · P_α(c)) )` measures how much more often
//! two tokens meet than chance predicts. Frequent tokens (`self`, `the`)
//! meet everything often, so raw counts would make them everyone's nearest
//! neighbour; PMI divides that away. Negative values (pairs that avoid each
//! other) are mostly noise at this corpus size and are clipped to zero,
//! which also keeps the matrix sparse. `P_α` raises context counts to the
//! power `α` before normalising, which tempers PMI's bias towards rare
//! contexts.

use super::cooccur::Cooccurrence;
use super::sparse::Csr;

/// The PPMI matrix (`vocab × vocab`, row = word, column = context) of the
/// pairs whose summed weight is at least `min_weight`.
pub fn ppmi(cooc: &Cooccurrence, vocab_len: usize, alpha: f64, min_weight: f32) -> Csr {
    let mut marginal = vec![0f64; vocab_len];
    for (a, b, w) in cooc.pairs() {
        marginal[a as usize] += f64::from(w);
        marginal[b as usize] += f64::from(w);
    }
    let total: f64 = marginal.iter().sum();
    let smoothed_total: f64 = marginal.iter().map(|m| m.powf(alpha)).sum();
    if total <= 0.0 || smoothed_total <= 0.0 {
        return Csr::from_triplets(vocab_len, vocab_len, &[]);
    }
    let ln_p_word: Vec<f64> = marginal.iter().map(|m| (m / total).ln()).collect();
    let ln_p_ctx: Vec<f64> = marginal
        .iter()
        .map(|m| (m.powf(alpha) / smoothed_total).ln())
        .collect();
    let mut triplets = Vec::new();
    for (a, b, w) in cooc.pairs() {
        if w < min_weight {
            continue;
        }
        let ln_joint = (f64::from(w) / total).ln();
        for (word, ctx) in [(a, b), (b, a)] {
            let pmi = ln_joint - ln_p_word[word as usize] - ln_p_ctx[ctx as usize];
            if pmi > 0.0 {
                triplets.push((word, ctx, pmi as f32));
            }
        }
    }
    Csr::from_triplets(vocab_len, vocab_len, &triplets)
}

#[cfg(test)]
mod tests {
    use super::ppmi;
    use crate::train::{Cooccurrence, Vocab};

    #[test]
    fn pairs_that_meet_more_than_chance_are_positive_and_others_dropped() {
        let v = Vocab::from_ranked(
            ["aa", "bb", "cc", "dd"]
                .iter()
                .map(|t| (t.to_string(), 1))
                .collect(),
        );
        let mut c = Cooccurrence::new(v.len(), 1, 50, true);
        // aa-bb always together; cc-dd together; one aa-cc meeting.
        for _ in 0..10 {
            c.add("aa bb", &v);
            c.add("cc dd", &v);
        }
        c.add("aa cc", &v);
        let m = ppmi(&c, v.len(), 1.0, 0.0);
        let value = |r: usize, col: u32| {
            (m.indptr[r]..m.indptr[r + 1])
                .find(|&k| m.indices[k] == col)
                .map(|k| m.values[k])
        };
        let ab = value(0, 1).expect("aa-bb is positive");
        assert!(ab > 0.0);
        assert_eq!(value(0, 2), None, "aa-cc meet less than chance: clipped");
        assert_eq!(
            value(1, 0),
            Some(ab),
            "with alpha = 1 the matrix is symmetric"
        );
    }

    #[test]
    fn min_weight_drops_rare_pairs() {
        let v = Vocab::from_ranked(["aa", "bb"].iter().map(|t| (t.to_string(), 1)).collect());
        let mut c = Cooccurrence::new(v.len(), 1, 50, true);
        c.add("aa bb", &v);
        assert_eq!(ppmi(&c, v.len(), 1.0, 2.0).nnz(), 0);
    }
}
