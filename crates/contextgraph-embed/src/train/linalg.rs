//! The dense linear algebra the randomised SVD needs: orthonormalising a
//! tall matrix and the eigen-decomposition of a small symmetric one.
//!
//! Tall matrices are row-major `n × w` with `w` around a hundred, so the
//! hot loops run along contiguous rows.

/// `Yᵀ·Y` (`w × w`, row-major) of a row-major `n × w` matrix.
pub(crate) fn gram(y: &[f64], w: usize) -> Vec<f64> {
    let mut g = vec![0f64; w * w];
    for row in y.chunks_exact(w) {
        for (i, &a) in row.iter().enumerate() {
            if a == 0.0 {
                continue;
            }
            let gi = &mut g[i * w..(i + 1) * w];
            // Upper triangle only; mirrored below.
            gi[i..]
                .iter_mut()
                .zip(&row[i..])
                .for_each(|(g, &b)| *g += a * b);
        }
    }
    for i in 0..w {
        for j in 0..i {
            g[i * w + j] = g[j * w + i];
        }
    }
    g
}

/// Orthonormalises the columns of row-major `n × w` `y` in place by
/// shifted Cholesky QR, applied twice (the second pass repairs the
/// orthogonality the first loses to rounding). A column that is (nearly) a
/// combination of the others comes out (nearly) zero instead of failing.
pub(crate) fn orthonormalize(y: &mut [f64], w: usize) {
    for _ in 0..2 {
        let mut g = gram(y, w);
        let trace: f64 = (0..w).map(|i| g[i * w + i]).sum();
        let shift = 1e-12 * trace.max(f64::MIN_POSITIVE);
        for i in 0..w {
            g[i * w + i] += shift;
        }
        let r = cholesky_upper(&g, w);
        // Y ← Y·R⁻¹, row by row: solve xᵀ·R = yᵀ.
        for row in y.chunks_exact_mut(w) {
            for j in 0..w {
                let mut s = row[j];
                for k in 0..j {
                    s -= row[k] * r[k * w + j];
                }
                let d = r[j * w + j];
                row[j] = if d > 0.0 { s / d } else { 0.0 };
            }
        }
    }
}

/// Upper-triangular `R` with `Rᵀ·R = g` for symmetric positive
/// semi-definite `g`; a non-positive pivot gives a zero row.
fn cholesky_upper(g: &[f64], w: usize) -> Vec<f64> {
    let mut r = vec![0f64; w * w];
    for i in 0..w {
        let mut d = g[i * w + i];
        for k in 0..i {
            d -= r[k * w + i] * r[k * w + i];
        }
        if d <= 0.0 {
            continue;
        }
        let d = d.sqrt();
        r[i * w + i] = d;
        for j in i + 1..w {
            let mut s = g[i * w + j];
            for k in 0..i {
                s -= r[k * w + i] * r[k * w + j];
            }
            r[i * w + j] = s / d;
        }
    }
    r
}

/// Eigen-decomposition of a symmetric `w × w` matrix by cyclic Jacobi
/// rotations: returns eigenvalues in descending order and the matching
/// eigenvectors as the columns of a row-major `w × w` matrix.
pub(crate) fn symmetric_eigen(a: &[f64], w: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = a.to_vec();
    let mut v = vec![0f64; w * w];
    for i in 0..w {
        v[i * w + i] = 1.0;
    }
    let norm: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    for _sweep in 0..100 {
        let off: f64 = (0..w)
            .flat_map(|i| (0..w).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * w + j] * a[i * w + j])
            .sum::<f64>()
            .sqrt();
        if off <= 1e-14 * norm.max(f64::MIN_POSITIVE) {
            break;
        }
        for p in 0..w {
            for q in p + 1..w {
                let apq = a[p * w + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * w + q] - a[p * w + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..w {
                    let (akp, akq) = (a[k * w + p], a[k * w + q]);
                    a[k * w + p] = c * akp - s * akq;
                    a[k * w + q] = s * akp + c * akq;
                }
                for k in 0..w {
                    let (apk, aqk) = (a[p * w + k], a[q * w + k]);
                    a[p * w + k] = c * apk - s * aqk;
                    a[q * w + k] = s * apk + c * aqk;
                }
                for k in 0..w {
                    let (vkp, vkq) = (v[k * w + p], v[k * w + q]);
                    v[k * w + p] = c * vkp - s * vkq;
                    v[k * w + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..w).collect();
    order.sort_by(|&i, &j| a[j * w + j].total_cmp(&a[i * w + i]));
    let values = order.iter().map(|&i| a[i * w + i]).collect();
    let mut vectors = vec![0f64; w * w];
    for (new, &old) in order.iter().enumerate() {
        for k in 0..w {
            vectors[k * w + new] = v[k * w + old];
        }
    }
    (values, vectors)
}

#[cfg(test)]
mod tests {
    use super::{gram, orthonormalize, symmetric_eigen};

    #[test]
    fn orthonormalize_gives_orthonormal_columns_spanning_the_input() {
        let w = 3;
        let mut y = vec![
            1.0, 2.0, 0.5, //
            0.0, 1.0, 3.0, //
            4.0, 0.0, 1.0, //
            1.0, 1.0, 1.0, //
            2.0, -1.0, 0.0,
        ];
        orthonormalize(&mut y, w);
        let g = gram(&y, w);
        for i in 0..w {
            for j in 0..w {
                let expect = if i == j { 1.0 } else { 0.0 };
                assert!(
                    (g[i * w + j] - expect).abs() < 1e-10,
                    "gram[{i}][{j}] = {}",
                    g[i * w + j]
                );
            }
        }
    }

    #[test]
    fn jacobi_recovers_eigenpairs() {
        // Eigenvalues of [[2, 1], [1, 2]] are 3 and 1.
        let (values, vectors) = symmetric_eigen(&[2.0, 1.0, 1.0, 2.0], 2);
        assert!((values[0] - 3.0).abs() < 1e-12 && (values[1] - 1.0).abs() < 1e-12);
        // The first eigenvector is ±(1, 1)/√2.
        assert!((vectors[0].abs() - vectors[2].abs()).abs() < 1e-12);
        assert!(vectors[0] * vectors[2] > 0.0);
    }
}
