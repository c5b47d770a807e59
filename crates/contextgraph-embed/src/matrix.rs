//! The embedding matrix as it is held in memory, and the row additions that
//! pooling is made of.
//!
//! An int8 model keeps its rows as the file's bytes plus one scale per row
//! instead of widening them to `f32` at load: the shipped model's matrix is
//! 3.4 MB that way against 13.4 MB widened, so the rows a cold build reads
//! at random per token mostly stay in the L2 cache instead of evicting the
//! parser's data, and loading writes nothing. The shipped model's bytes are
//! compiled into the binary, so its rows are borrowed, not copied.
//!
//! Every addition gives the bits the widened matrix gave: a component is
//! still `f32::from(q) * scale`, rounded to `f32` before the weight
//! multiplies it, and the sums keep their order (Rust never fuses a
//! multiply and an add, so the compiler's vector code cannot change them).

use std::borrow::Cow;
use std::sync::OnceLock;

/// The rows of a model.
#[derive(Debug, Clone)]
pub(crate) enum Matrix {
    /// `f32` rows (from float32 files, or float16 ones widened).
    Float(Vec<f32>),
    /// Int8 rows and their scales.
    Int8(Int8Rows),
}

/// Int8 rows: row `r` component `j` is `f32::from(q[r * dim + j] as i8) *
/// scales[r]`.
#[derive(Debug, Clone)]
pub(crate) struct Int8Rows {
    /// The quantised values, row-major, as stored in the file.
    q: Cow<'static, [u8]>,
    /// One finite scale per row.
    scales: Vec<f32>,
    /// The rows widened to `f32`, made on the first call of
    /// [`Matrix::row`] only: inspection (nearest tokens, the trainer's
    /// export) wants `&[f32]` rows, pooling never does.
    widened: OnceLock<Vec<f32>>,
}

impl Int8Rows {
    /// Wraps checked parts: `q.len() == scales.len() * dim`, scales finite.
    pub(crate) fn new(q: Cow<'static, [u8]>, scales: Vec<f32>) -> Self {
        Self {
            q,
            scales,
            widened: OnceLock::new(),
        }
    }

    /// [`Matrix::add_rows`] for int8 rows, with AVX2 when the CPU has it.
    ///
    /// Widening a byte to `f32` costs a chain of unpacks and shifts with
    /// the baseline x86-64 instructions (about twice the instructions of
    /// adding an `f32` row); AVX2 widens eight bytes in one instruction.
    /// Both compile the same loop, whose operations are exactly rounded
    /// and never fused, so the two give the same bits.
    fn add_rows(&self, weights: &[f32], dim: usize, ids: &[u32], out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: `add_rows_avx2` only requires AVX2, which the CPU
            // was just found to have.
            #[allow(unsafe_code)]
            unsafe {
                self.add_rows_avx2(weights, dim, ids, out)
            };
            return;
        }
        self.add_rows_plain(weights, dim, ids, out);
    }

    /// The loop, compiled for the baseline instruction set here and for
    /// AVX2 in [`Self::add_rows_avx2`].
    #[inline(always)]
    fn add_rows_plain(&self, weights: &[f32], dim: usize, ids: &[u32], out: &mut [f32]) {
        add_rows_with(
            ids,
            out,
            |id| {
                let id = id as usize;
                Some(QRow {
                    weight: *weights.get(id)?,
                    scale: *self.scales.get(id)?,
                    q: self.q.get(id * dim..(id + 1) * dim)?,
                })
            },
            add1_i8,
            add4_i8,
        );
    }

    /// [`Self::add_rows_plain`] compiled with AVX2 (no FMA: a fused
    /// multiply-add would round once where the widened matrix rounded
    /// twice).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn add_rows_avx2(&self, weights: &[f32], dim: usize, ids: &[u32], out: &mut [f32]) {
        self.add_rows_plain(weights, dim, ids, out);
    }
}

/// One int8 row with its pooling weight and scale.
#[derive(Clone, Copy)]
struct QRow<'a> {
    weight: f32,
    scale: f32,
    q: &'a [u8],
}

/// The value of a quantised component: the same expression the widened
/// matrix was built with.
#[inline(always)]
fn dequant(q: u8, scale: f32) -> f32 {
    f32::from(q as i8) * scale
}

impl Matrix {
    /// Row `id` as `f32` (`None` out of range); an int8 matrix is widened
    /// once, on the first call.
    pub(crate) fn row(&self, id: usize, dim: usize) -> Option<&[f32]> {
        let all = match self {
            Matrix::Float(v) => v,
            Matrix::Int8(m) => m.widened.get_or_init(|| {
                let mut out = Vec::with_capacity(m.q.len());
                for (row, &scale) in m.q.chunks_exact(dim).zip(&m.scales) {
                    out.extend(row.iter().map(|&q| dequant(q, scale)));
                }
                out
            }),
        };
        all.get(id * dim..(id + 1) * dim)
    }

    /// `out += weight × row` for each of `ids` in order (ids out of range,
    /// of `weights` or of the matrix, add nothing).
    pub(crate) fn add_rows(&self, weights: &[f32], dim: usize, ids: &[u32], out: &mut [f32]) {
        match self {
            Matrix::Float(v) => add_rows_with(
                ids,
                out,
                |id| {
                    let id = id as usize;
                    Some((*weights.get(id)?, v.get(id * dim..(id + 1) * dim)?))
                },
                add1_f32,
                add4_f32,
            ),
            Matrix::Int8(m) => m.add_rows(weights, dim, ids, out),
        }
    }

    /// `out += weight × row` for one id: [`Self::add_rows`] of one.
    #[inline]
    pub(crate) fn add_row(&self, weights: &[f32], dim: usize, id: u32, out: &mut [f32]) {
        self.add_rows(weights, dim, std::slice::from_ref(&id), out);
    }
}

/// Four rows per pass over `out` when all four exist: each component gets
/// the same four additions in the same order as four passes would give it
/// (so the same bits), with `out` loaded and stored once instead of four
/// times (a cold build adds every token of every chunk). A quad with a
/// missing row, and the last `len % 4` ids, go one row at a time.
#[inline(always)]
fn add_rows_with<R: Copy>(
    ids: &[u32],
    out: &mut [f32],
    get: impl Fn(u32) -> Option<R>,
    add1: impl Fn(&mut [f32], R),
    add4: impl Fn(&mut [f32], [R; 4]),
) {
    let mut quads = ids.chunks_exact(4);
    for quad in &mut quads {
        let rows = [get(quad[0]), get(quad[1]), get(quad[2]), get(quad[3])];
        if let [Some(r0), Some(r1), Some(r2), Some(r3)] = rows {
            add4(out, [r0, r1, r2, r3]);
        } else {
            rows.into_iter().flatten().for_each(|r| add1(out, r));
        }
    }
    for &id in quads.remainder() {
        if let Some(r) = get(id) {
            add1(out, r);
        }
    }
}

fn add1_f32(out: &mut [f32], (w, r): (f32, &[f32])) {
    out.iter_mut().zip(r).for_each(|(o, r)| *o += w * r);
}

fn add4_f32(out: &mut [f32], rows: [(f32, &[f32]); 4]) {
    let [(w0, r0), (w1, r1), (w2, r2), (w3, r3)] = rows;
    out.iter_mut()
        .zip(r0)
        .zip(r1)
        .zip(r2)
        .zip(r3)
        .for_each(|((((o, a), b), c), d)| {
            *o = *o + w0 * a + w1 * b + w2 * c + w3 * d;
        });
}

#[inline(always)]
fn add1_i8(out: &mut [f32], r: QRow<'_>) {
    let (w, s) = (r.weight, r.scale);
    out.iter_mut().zip(r.q).for_each(|(o, &q)| {
        let a = dequant(q, s);
        *o += w * a;
    });
}

#[inline(always)]
fn add4_i8(out: &mut [f32], rows: [QRow<'_>; 4]) {
    let [r0, r1, r2, r3] = rows;
    let (w0, w1, w2, w3) = (r0.weight, r1.weight, r2.weight, r3.weight);
    let (s0, s1, s2, s3) = (r0.scale, r1.scale, r2.scale, r3.scale);
    out.iter_mut()
        .zip(r0.q)
        .zip(r1.q)
        .zip(r2.q)
        .zip(r3.q)
        .for_each(|((((o, &qa), &qb), &qc), &qd)| {
            let (a, b, c, d) = (
                dequant(qa, s0),
                dequant(qb, s1),
                dequant(qc, s2),
                dequant(qd, s3),
            );
            *o = *o + w0 * a + w1 * b + w2 * c + w3 * d;
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random int8 rows, weights and id sequences (the trainer's
    /// splitmix64, so failures reproduce).
    struct Rng(crate::train::SplitMix);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0.next()
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn float(&mut self) -> f32 {
            ((self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
                * [1e-3, 1.0, 1e3][self.below(3)]
        }
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Every kernel this CPU can run gives, for random sums, the bits the
    /// `f32` path gives on the widened rows (which is the pooling code of
    /// the models that were widened at load).
    #[test]
    fn each_int8_kernel_gives_the_bits_of_the_widened_rows() {
        let mut rng = Rng(crate::train::SplitMix(1));
        for (rows, dim) in [(50, 128), (33, 37), (8, 1), (20, 16)] {
            let q: Vec<u8> = (0..rows * dim).map(|_| rng.next() as u8).collect();
            let scales: Vec<f32> = (0..rows).map(|_| rng.float().abs()).collect();
            let weights: Vec<f32> = (0..rows).map(|_| rng.float().abs()).collect();
            let int8 = Int8Rows::new(Cow::Owned(q), scales);
            let widened = Matrix::Int8(int8.clone());
            let widened = Matrix::Float(
                (0..rows)
                    .flat_map(|r| widened.row(r, dim).unwrap_or_default().to_vec())
                    .collect(),
            );
            for run in 0..500 {
                let ids: Vec<u32> = (0..run % 41)
                    .map(|_| match rng.below(12) {
                        0 => (rows + rng.below(2)) as u32,
                        _ => rng.below(rows) as u32,
                    })
                    .collect();
                let start: Vec<f32> = (0..dim).map(|_| rng.float()).collect();
                let mut want = start.clone();
                widened.add_rows(&weights, dim, &ids, &mut want);
                let mut plain = start.clone();
                int8.add_rows_plain(&weights, dim, &ids, &mut plain);
                assert_eq!(bits(&plain), bits(&want), "plain, {rows}×{dim}, {ids:?}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut avx2 = start.clone();
                    // SAFETY: the CPU has AVX2, checked just above.
                    #[allow(unsafe_code)]
                    unsafe {
                        int8.add_rows_avx2(&weights, dim, &ids, &mut avx2)
                    };
                    assert_eq!(bits(&avx2), bits(&want), "avx2, {rows}×{dim}, {ids:?}");
                }
            }
        }
    }
}
