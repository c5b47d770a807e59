//! Truncated SVD of a sparse matrix by randomised subspace iteration.
//!
//! Only the top `k` singular directions are wanted, of a matrix far too big
//! to decompose densely. Multiplying a random `n × (k + p)` block by the
//! matrix, and then by `(A·Aᵀ)` a few more times (re-orthonormalising in
//! between), converges on the dominant subspace; projecting the matrix onto
//! it leaves a small `(k + p) × (k + p)` problem solved exactly.

use super::linalg::{gram, orthonormalize, symmetric_eigen};
use super::sparse::Csr;

/// The top singular values and left singular vectors of a matrix.
#[derive(Debug, Clone)]
pub struct Svd {
    /// Number of kept components.
    pub k: usize,
    /// Singular values, descending.
    pub values: Vec<f64>,
    /// Left singular vectors, row-major `rows × k`.
    pub u: Vec<f64>,
}

/// A small deterministic generator (SplitMix64) for the random start, so a
/// training run is reproducible from its seed.
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Approximately standard normal (sum of uniforms, centred): the range
    /// finder only needs a random, full-rank start.
    fn gaussian(&mut self) -> f64 {
        (0..4)
            .map(|_| (self.next() >> 11) as f64 / (1u64 << 53) as f64)
            .sum::<f64>()
            - 2.0
    }
}

/// The top `k` singular triplets of `a` (left vectors only), with
/// `oversample` extra directions and `power_iters` rounds of subspace
/// iteration.
pub fn randomized_svd(a: &Csr, k: usize, oversample: usize, power_iters: usize, seed: u64) -> Svd {
    let width = (k + oversample).min(a.rows).min(a.cols).max(1);
    let k = k.min(width);
    let at = a.transpose();
    let mut rng = SplitMix(seed);
    let omega: Vec<f64> = (0..a.cols * width).map(|_| rng.gaussian()).collect();
    let mut q = a.mul_dense(&omega, width);
    orthonormalize(&mut q, width);
    for _ in 0..power_iters {
        let mut z = at.mul_dense(&q, width);
        orthonormalize(&mut z, width);
        q = a.mul_dense(&z, width);
        orthonormalize(&mut q, width);
    }
    // B = Qᵀ·A, held as Bᵀ = Aᵀ·Q (cols × width); B·Bᵀ = (Bᵀ)ᵀ·Bᵀ.
    let bt = at.mul_dense(&q, width);
    let bbt = gram(&bt, width);
    let (eigenvalues, w) = symmetric_eigen(&bbt, width);
    let values: Vec<f64> = eigenvalues
        .iter()
        .take(k)
        .map(|&l| l.max(0.0).sqrt())
        .collect();
    // U = Q·W, first k columns.
    let mut u = vec![0f64; a.rows * k];
    for (qrow, urow) in q.chunks_exact(width).zip(u.chunks_exact_mut(k)) {
        for (c, out) in urow.iter_mut().enumerate() {
            *out = qrow
                .iter()
                .enumerate()
                .map(|(j, &x)| x * w[j * width + c])
                .sum();
        }
    }
    Svd { k, values, u }
}

#[cfg(test)]
mod tests {
    use super::randomized_svd;
    use crate::train::Csr;

    #[test]
    fn recovers_the_singular_values_of_a_known_matrix() {
        // diag(5, 3, 1) padded to 6 × 6 with zeros, shuffled rows/cols.
        let a = Csr::from_triplets(6, 6, &[(4, 1, 5.0), (0, 3, 3.0), (2, 5, 1.0)]);
        let svd = randomized_svd(&a, 2, 2, 2, 7);
        assert_eq!(svd.k, 2);
        assert!((svd.values[0] - 5.0).abs() < 1e-9, "{:?}", svd.values);
        assert!((svd.values[1] - 3.0).abs() < 1e-9, "{:?}", svd.values);
        // The first left singular vector is ±e4.
        assert!((svd.u[4 * 2].abs() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn is_deterministic_for_a_seed() {
        let a = Csr::from_triplets(5, 5, &[(0, 1, 1.0), (1, 2, 2.0), (3, 4, 0.5), (2, 0, 1.5)]);
        let x = randomized_svd(&a, 2, 1, 1, 42);
        let y = randomized_svd(&a, 2, 1, 1, 42);
        assert_eq!(x.u, y.u);
    }
}
