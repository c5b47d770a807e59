//! A compressed sparse row matrix, just what the SVD needs.

/// A `rows × cols` sparse matrix in CSR form.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Row `r`'s entries are `indptr[r]..indptr[r + 1]`.
    pub indptr: Vec<usize>,
    /// Column of each entry.
    pub indices: Vec<u32>,
    /// Value of each entry.
    pub values: Vec<f32>,
}

impl Csr {
    /// Builds a matrix from `(row, col, value)` triplets (in any order;
    /// duplicates are kept as separate entries, which products sum).
    pub fn from_triplets(rows: usize, cols: usize, triplets: &[(u32, u32, f32)]) -> Self {
        let mut indptr = vec![0usize; rows + 1];
        for &(r, _, _) in triplets {
            indptr[r as usize + 1] += 1;
        }
        for r in 0..rows {
            indptr[r + 1] += indptr[r];
        }
        let mut next = indptr.clone();
        let mut indices = vec![0u32; triplets.len()];
        let mut values = vec![0f32; triplets.len()];
        for &(r, c, v) in triplets {
            let slot = &mut next[r as usize];
            indices[*slot] = c;
            values[*slot] = v;
            *slot += 1;
        }
        Self {
            rows,
            cols,
            indptr,
            indices,
            values,
        }
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// The transpose.
    pub fn transpose(&self) -> Self {
        let triplets: Vec<(u32, u32, f32)> = (0..self.rows)
            .flat_map(|r| {
                (self.indptr[r]..self.indptr[r + 1])
                    .map(move |k| (self.indices[k], r as u32, self.values[k]))
            })
            .collect();
        Self::from_triplets(self.cols, self.rows, &triplets)
    }

    /// `self · x` for a dense row-major `cols × width` matrix `x`; the
    /// result is row-major `rows × width`.
    pub fn mul_dense(&self, x: &[f64], width: usize) -> Vec<f64> {
        debug_assert_eq!(x.len(), self.cols * width);
        let mut y = vec![0f64; self.rows * width];
        for (r, out) in y.chunks_exact_mut(width).enumerate() {
            for k in self.indptr[r]..self.indptr[r + 1] {
                let c = self.indices[k] as usize;
                let v = f64::from(self.values[k]);
                let src = &x[c * width..(c + 1) * width];
                out.iter_mut().zip(src).for_each(|(o, s)| *o += v * s);
            }
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::Csr;

    #[test]
    fn product_and_transpose_match_the_dense_definition() {
        // [[1, 0, 2], [0, 3, 0]]
        let m = Csr::from_triplets(2, 3, &[(1, 1, 3.0), (0, 2, 2.0), (0, 0, 1.0)]);
        let x = [1.0, 10.0, 2.0, 20.0, 3.0, 30.0]; // 3 × 2
        assert_eq!(m.mul_dense(&x, 2), [7.0, 70.0, 6.0, 60.0]);
        let t = m.transpose();
        assert_eq!((t.rows, t.cols, t.nnz()), (3, 2, 3));
        assert_eq!(t.mul_dense(&[1.0, 1.0], 1), [1.0, 3.0, 2.0]);
    }
}
