//! An exact upper bound on a row's semantic score from a few bytes, so the
//! scoring pass skips most rows without reading them (issue 29).
//!
//! The pass is bound by memory: every query read every row (128 bytes; 45 MB
//! on a 352,000-chunk tree). Only the best few dozen rows are kept
//! (`Rows::top`), and a row is offered to the running top only when its
//! score is above the top's floor. A row whose *upper bound* is not above
//! the floor would be refused anyway, so it need not be read: the answer is
//! the same, row for row.
//!
//! The bound. The rows' vectors share a few directions (a static model's
//! vectors are far from isotropic: on the 352k-chunk tree the first 32 of
//! 128 principal directions hold 83% of the rows' energy). With `U` those
//! `P` directions (orthonormal), a row `v` is `Uᵀp + e` with `p = Uv`, and
//! for the goal `q`:
//!
//! ```text
//! q·v = (Uq)·p + q·e ≤ (Uq)·p + |q⊥| |v⊥|
//! ```
//!
//! where `q⊥`, `v⊥` are the parts outside the directions
//! (Cauchy–Schwarz). Each row keeps `p` rounded to `P` int8 codes with a
//! scale, and `|v⊥|` rounded up: `P + 8` bytes instead of 128. Every
//! rounding is paid for in the bound: the codes' (at most half a step each),
//! the goal's projection rounded to `i16` for the integer kernel, and a
//! margin for floating-point arithmetic a hundred times larger than its
//! error (`MARGIN`). The bound is compared in the score's own arithmetic:
//! `bound as f32 · scale · goal scale`, whose rounding is monotone, so a
//! row whose bound is not above the floor has a score that is not either.
//! The tests check the bound against the exact product for every row, and
//! the pass with the bound against the pass without it.
//!
//! The directions are the top eigenvectors of the second-moment matrix of
//! a sample of the rows (found once per set of rows, on the first query
//! that scores a large index; any orthonormal directions give a valid
//! bound, these give a tight one).

use std::sync::Arc;

/// Directions kept per row: 32 int8 codes and two `f32`s (40 bytes against
/// 128). On the 16k tree, the share of rows whose bound is above the floor
/// was 51% with 16, 20% with 32 and 8% with 48 directions (64 kept, 38
/// goals): 32 reads the fewest bytes (40 + 0.20 × 128).
pub(crate) const DIRECTIONS: usize = 32;

/// Rows sampled to find the directions: enough for a 128 × 128 matrix.
const SAMPLE: usize = 4096;

/// Relative margin added to every bound, times `|q|·127·√dim` (the largest
/// product a row can have): the bound's floating-point arithmetic (the
/// projection, the norms, the `f32` per-row evaluation) errs by under
/// 1e-6 of that; the margin is 1e-4 of it, far above any error and far
/// below the gaps that matter (it costs no measurable pruning).
const MARGIN: f64 = 1e-4;

/// The bound's per-row data for rows `0..covered` of one set of rows.
#[derive(Debug)]
pub(crate) struct Bounds {
    dim: usize,
    /// `DIRECTIONS` unit vectors of `dim` components, row after row.
    basis: Vec<f64>,
    /// Rows covered: slots `0..covered`.
    covered: usize,
    /// Per row, `DIRECTIONS` int8 codes (as bytes): `p ≈ code · step`.
    codes: Vec<u8>,
    /// Per row, the codes' step (0: no vector).
    steps: Vec<f32>,
    /// Per row, `|v⊥|` rounded up.
    perps: Vec<f32>,
}

/// A goal's side of the bound: its projection rounded for the integer
/// kernel and the constants of its rounding.
#[derive(Debug)]
pub(crate) struct GoalBound {
    /// The goal's projection on the directions, rounded to `i16`.
    pub(crate) codes: Vec<i16>,
    /// The rounding's step: `Uq ≈ codes · unit`.
    unit: f32,
    /// Per unit of a row's step: what rounding the goal's projection and
    /// the row's codes can add to the product (`|Uq - codes·unit| · 127√P
    /// + |Uq| · √P / 2`).
    slack: f32,
    /// `|q⊥|`.
    perp: f32,
    /// The absolute margin (see [`MARGIN`]).
    margin: f32,
}

impl Bounds {
    /// The bound's data for the rows `row(0..n)` (`None`: a row without a
    /// vector), on up to `threads` threads; `None` when the rows are too
    /// short to bound with [`DIRECTIONS`] directions.
    pub(crate) fn build<'a>(
        dim: usize,
        n: usize,
        row: &(dyn Fn(usize) -> Option<&'a [u8]> + Sync),
        threads: usize,
    ) -> Option<Bounds> {
        if dim <= DIRECTIONS || n == 0 {
            return None;
        }
        let basis = directions(dim, n, row)?;
        let columns: Vec<f64> = (0..dim)
            .flat_map(|d| basis.chunks_exact(dim).map(move |u| u[d]))
            .collect();
        let parts = threads.clamp(1, 8);
        let part = n.div_ceil(parts);
        let project = |range: std::ops::Range<usize>| {
            let mut codes = Vec::with_capacity(range.len() * DIRECTIONS);
            let mut steps = Vec::with_capacity(range.len());
            let mut perps = Vec::with_capacity(range.len());
            for i in range {
                let (step, perp) = match row(i) {
                    Some(v) => project_row(&columns, v, &mut codes),
                    None => {
                        codes.extend([0u8; DIRECTIONS]);
                        (0.0, 0.0)
                    }
                };
                steps.push(step);
                perps.push(perp);
            }
            (codes, steps, perps)
        };
        let results: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..parts)
                .map(|i| {
                    let range = (i * part).min(n)..((i + 1) * part).min(n);
                    let project = &project;
                    std::thread::Builder::new()
                        .name("cgp-bounds".into())
                        .spawn_scoped(scope, move || project(range.clone()))
                        .map_err(|_| (i * part).min(n)..((i + 1) * part).min(n))
                })
                .collect();
            let mut out = vec![project(0..part.min(n))];
            for h in handles {
                out.push(match h {
                    Ok(h) => h.join().ok()?,
                    // No thread: this one projects the part.
                    Err(range) => project(range),
                });
            }
            Some(out)
        })?;
        let mut bounds = Bounds {
            dim,
            basis,
            covered: n,
            codes: Vec::with_capacity(n * DIRECTIONS),
            steps: Vec::with_capacity(n),
            perps: Vec::with_capacity(n),
        };
        for (codes, steps, perps) in results {
            bounds.codes.extend(codes);
            bounds.steps.extend(steps);
            bounds.perps.extend(perps);
        }
        Some(bounds)
    }

    /// Rows covered: slots `0..covered()`.
    pub(crate) fn covered(&self) -> usize {
        self.covered
    }

    /// The codes of rows `range` (within [`covered`](Self::covered)).
    pub(crate) fn codes(&self, range: std::ops::Range<usize>) -> &[u8] {
        self.codes
            .get(range.start * DIRECTIONS..range.end * DIRECTIONS)
            .unwrap_or(&[])
    }

    /// The goal's side of the bound for the integer goal `q` (the scoring
    /// pass's rounded goal); `None` when these bounds are for other rows'
    /// length.
    pub(crate) fn goal(&self, q: &[i16]) -> Option<GoalBound> {
        if q.len() != self.dim {
            return None;
        }
        let q: Vec<f64> = q.iter().map(|&x| f64::from(x)).collect();
        let norm2: f64 = q.iter().map(|x| x * x).sum();
        let projected: Vec<f64> = self
            .basis
            .chunks_exact(self.dim)
            .map(|u| u.iter().zip(&q).map(|(a, b)| a * b).sum())
            .collect();
        let in_span2: f64 = projected.iter().map(|x| x * x).sum();
        let perp = (norm2 - in_span2).max(0.0).sqrt();
        let top = projected.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let unit = if top > 0.0 { top / 32767.0 } else { 1.0 };
        let codes: Vec<i16> = projected
            .iter()
            .map(|x| (x / unit).round().clamp(-32767.0, 32767.0) as i16)
            .collect();
        let rounding: f64 = projected
            .iter()
            .zip(&codes)
            .map(|(x, &c)| (x - f64::from(c) * unit).powi(2))
            .sum::<f64>()
            .sqrt();
        let root = (DIRECTIONS as f64).sqrt();
        let slack = rounding * 127.0 * root + in_span2.sqrt() * root / 2.0;
        let largest = norm2.sqrt() * 127.0 * (self.dim as f64).sqrt();
        Some(GoalBound {
            codes,
            unit: unit as f32,
            slack: up(slack),
            perp: up(perp),
            margin: up(MARGIN * largest + 2.0),
        })
    }

    /// An upper bound on the integer product of the goal with row `i`
    /// (covered), from the integer product `coded` of the goal's codes with
    /// the row's.
    #[cfg(test)]
    pub(crate) fn bound(&self, goal: &GoalBound, i: usize, coded: i32) -> f32 {
        let mut out = Vec::new();
        self.bound_block(goal, i, 1, &[coded], &mut out);
        out[0]
    }

    /// Into `out`, an upper bound on the integer product of the goal with
    /// each of the `n` rows from `first` on, from the integer products
    /// `coded` of the goal's codes with theirs; `f32::INFINITY` for a row
    /// not covered or without its product (it is then read).
    pub(crate) fn bound_block(
        &self,
        goal: &GoalBound,
        first: usize,
        n: usize,
        coded: &[i32],
        out: &mut Vec<f32>,
    ) {
        out.clear();
        let end = (first + n).min(self.covered);
        let (steps, perps) = match (self.steps.get(first..end), self.perps.get(first..end)) {
            (Some(s), Some(p)) => (s, p),
            _ => (&[][..], &[][..]),
        };
        // One straight pass over three arrays: vectorised.
        out.extend(
            steps
                .iter()
                .zip(perps)
                .zip(coded)
                .map(|((&step, &perp), &c)| {
                    step * (goal.unit * c as f32 + goal.slack) + goal.perp * perp + goal.margin
                }),
        );
        out.resize(n, f32::INFINITY);
    }
}

/// `x` as an `f32` no smaller than it.
fn up(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) < x {
        f.next_up()
    } else {
        f
    }
}

/// Projects row `v` (int8 as bytes) on the directions (`columns`: the
/// basis transposed, `DIRECTIONS` values per component): pushes its codes,
/// returns its step and `|v⊥|` (rounded up). The step is at least the
/// largest projection over 127 (rounded up), so no code is clamped and
/// each is within half a step of the projection. The projection is summed
/// component by component into all directions at once (independent sums,
/// which the compiler vectorises; a per-direction sum is not).
fn project_row(columns: &[f64], v: &[u8], codes: &mut Vec<u8>) -> (f32, f32) {
    let mut p = [0f64; DIRECTIONS];
    let mut norm2 = 0i64;
    for (&x, column) in v.iter().zip(columns.chunks_exact(DIRECTIONS)) {
        let x = x as i8;
        norm2 += i64::from(x) * i64::from(x);
        let x = f64::from(x);
        for (pk, u) in p.iter_mut().zip(column) {
            *pk += u * x;
        }
    }
    let in_span2: f64 = p.iter().map(|x| x * x).sum();
    let perp = up((norm2 as f64 - in_span2).max(0.0).sqrt());
    let top = p.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if top == 0.0 {
        codes.extend([0u8; DIRECTIONS]);
        // Any positive step: the codes are zero, the projection too.
        return (f32::MIN_POSITIVE, perp);
    }
    let step = up(top / 127.0);
    let s = f64::from(step);
    codes.extend(
        p.iter()
            .map(|&x| (x / s).round().clamp(-127.0, 127.0) as i8 as u8),
    );
    (step, perp)
}

/// The [`DIRECTIONS`] leading eigenvectors of the second-moment matrix of
/// up to [`SAMPLE`] rows taken evenly from `0..n`, as unit vectors, row
/// after row; `None` when no sampled row has a vector.
fn directions<'a>(
    dim: usize,
    n: usize,
    row: &(dyn Fn(usize) -> Option<&'a [u8]> + Sync),
) -> Option<Vec<f64>> {
    let stride = n.div_ceil(SAMPLE).max(1);
    let mut m = vec![0f64; dim * dim];
    let mut seen = 0usize;
    for i in (0..n).step_by(stride) {
        let Some(v) = row(i) else { continue };
        let v: Vec<f64> = v.iter().map(|&x| f64::from(x as i8)).collect();
        let norm2: f64 = v.iter().map(|x| x * x).sum();
        if norm2 == 0.0 {
            continue;
        }
        for a in 0..dim {
            let va = v[a] / norm2;
            for b in a..dim {
                m[a * dim + b] += va * v[b];
            }
        }
        seen += 1;
    }
    if seen == 0 {
        return None;
    }
    for a in 0..dim {
        for b in 0..a {
            m[a * dim + b] = m[b * dim + a];
        }
    }
    let (values, vectors) = jacobi(dim, m);
    let mut order: Vec<usize> = (0..dim).collect();
    order.sort_by(|&x, &y| values[y].total_cmp(&values[x]).then(x.cmp(&y)));
    let mut basis = Vec::with_capacity(DIRECTIONS * dim);
    for &k in order.iter().take(DIRECTIONS) {
        basis.extend((0..dim).map(|i| vectors[i * dim + k]));
    }
    Some(basis)
}

/// Eigenvalues and eigenvectors (as columns of the returned `dim × dim`
/// matrix) of the symmetric matrix `a`, by cyclic Jacobi rotations: the
/// vectors come out orthonormal to the last bits of `f64`, which the bound
/// relies on (its margin covers far more than that).
fn jacobi(dim: usize, mut a: Vec<f64>) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0f64; dim * dim];
    for i in 0..dim {
        v[i * dim + i] = 1.0;
    }
    let total: f64 = a.iter().map(|x| x * x).sum();
    for _sweep in 0..30 {
        let off: f64 = (0..dim)
            .flat_map(|i| (0..dim).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * dim + j] * a[i * dim + j])
            .sum();
        if off <= 1e-22 * total {
            break;
        }
        for p in 0..dim {
            for q in p + 1..dim {
                let apq = a[p * dim + q];
                if apq.abs() <= 1e-300 {
                    continue;
                }
                let theta = (a[q * dim + q] - a[p * dim + p]) / (2.0 * apq);
                let t = if theta == 0.0 {
                    1.0
                } else {
                    theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
                };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..dim {
                    let (akp, akq) = (a[k * dim + p], a[k * dim + q]);
                    a[k * dim + p] = c * akp - s * akq;
                    a[k * dim + q] = s * akp + c * akq;
                }
                for k in 0..dim {
                    let (apk, aqk) = (a[p * dim + k], a[q * dim + k]);
                    a[p * dim + k] = c * apk - s * aqk;
                    a[q * dim + k] = s * apk + c * aqk;
                }
                for k in 0..dim {
                    let (vkp, vkq) = (v[k * dim + p], v[k * dim + q]);
                    v[k * dim + p] = c * vkp - s * vkq;
                    v[k * dim + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..dim).map(|i| a[i * dim + i]).collect(), v)
}

/// The bounds a set of rows shares between its queries: built by the first
/// large query, rebuilt when rows appended since leave a quarter of them
/// uncovered. A copy of the rows starts without (its later rows may
/// differ).
#[derive(Debug, Default)]
pub(crate) struct BoundsCell(std::sync::Mutex<Option<Arc<Bounds>>>);

impl Clone for BoundsCell {
    fn clone(&self) -> Self {
        BoundsCell::default()
    }
}

impl BoundsCell {
    /// The bounds covering at least three quarters of `n` rows, built now
    /// when there are none such; `None` when they cannot be built.
    pub(crate) fn get_or_build(
        &self,
        n: usize,
        build: impl FnOnce() -> Option<Bounds>,
    ) -> Option<Arc<Bounds>> {
        let mut cell = self.0.lock().ok()?;
        if let Some(b) = cell.as_ref().filter(|b| b.covered() >= n - n / 4) {
            return Some(Arc::clone(b));
        }
        let built = Arc::new(build()?);
        *cell = Some(Arc::clone(&built));
        Some(built)
    }
}

/// Rows shaped like a static model's: a shared direction, a few strong
/// ones, noise; some at the int8 extremes.
#[cfg(test)]
pub(crate) fn test_rows(n: usize, dim: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut out = Vec::with_capacity(n * dim);
    for i in 0..n {
        let w: [f64; 4] = [next(), next(), next(), next()];
        let v: Vec<f64> = (0..dim)
            .map(|d| 0.6 + w[d % 4] * 2.0 * ((d as f64) / 9.0).sin() + 0.4 * next())
            .collect();
        let top = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (d, x) in v.iter().enumerate() {
            let c = match i % 97 {
                0 => 127.0,
                1 if d % 2 == 0 => -127.0,
                1 => 127.0,
                _ => (x / top * 127.0).round(),
            };
            out.push(c as i8 as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize, dim: usize) -> Vec<u8> {
        test_rows(n, dim)
    }

    /// For every row and several goals (extremes included) the bound is at
    /// least the exact integer product.
    #[test]
    fn the_bound_is_never_below_the_product() {
        let (n, dim) = (3_000, 128);
        let data = rows(n, dim);
        let row = |i: usize| data.get(i * dim..(i + 1) * dim);
        let bounds = Bounds::build(dim, n, &row, 3).expect("bounds");
        assert_eq!(bounds.covered(), n);
        let goals: Vec<Vec<i16>> = vec![
            (0..dim)
                .map(|d| ((d * 37 % 101) as i16 - 50) * 600)
                .collect(),
            (0..dim)
                .map(|d| if d % 2 == 0 { 32767 } else { -32767 })
                .collect(),
            vec![32767; dim],
            (0..dim).map(|d| if d == 5 { -32767 } else { 0 }).collect(),
            // Along the rows' shared direction: the tightest case.
            {
                let mut s = vec![0f64; dim];
                for i in 0..n {
                    for (d, &b) in data[i * dim..(i + 1) * dim].iter().enumerate() {
                        s[d] += f64::from(b as i8);
                    }
                }
                let top = s.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                s.iter()
                    .map(|x| (x / top * 32767.0).round() as i16)
                    .collect()
            },
        ];
        let mut slack = 0f64;
        for q in &goals {
            let qn = q.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
            let goal = bounds.goal(q).expect("goal");
            for i in 0..n {
                let v = &data[i * dim..(i + 1) * dim];
                let exact: i64 = q
                    .iter()
                    .zip(v)
                    .map(|(&a, &b)| i64::from(a) * i64::from(b as i8))
                    .sum();
                let coded: i32 = goal
                    .codes
                    .iter()
                    .zip(bounds.codes(i..i + 1))
                    .map(|(&a, &b)| i32::from(a) * i32::from(b as i8))
                    .sum();
                let b = bounds.bound(&goal, i, coded);
                assert!(f64::from(b) >= exact as f64, "row {i}: {b} < {exact}");
                let vn = v
                    .iter()
                    .map(|&x| f64::from(x as i8).powi(2))
                    .sum::<f64>()
                    .sqrt();
                slack += (f64::from(b) - exact as f64) / (qn * vn);
            }
        }
        // And it is not vacuous: on average a bound is above its product by
        // a small part of the largest product the row could have.
        let mean = slack / (goals.len() * n) as f64;
        assert!(mean < 0.25, "{mean}");
    }

    /// The directions are orthonormal.
    #[test]
    fn the_directions_are_orthonormal() {
        let (n, dim) = (500, 64);
        let data = rows(n, dim);
        let basis = directions(dim, n, &|i| data.get(i * dim..(i + 1) * dim)).expect("basis");
        for (i, a) in basis.chunks_exact(dim).enumerate() {
            for (j, b) in basis.chunks_exact(dim).enumerate() {
                let d: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((d - want).abs() < 1e-12, "{i} {j}: {d}");
            }
        }
    }
}
