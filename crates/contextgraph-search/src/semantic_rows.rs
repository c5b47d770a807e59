//! The semantic signal's vectors held per slot, and the scoring pass over
//! them.
//!
//! Row `s` is slot `s`'s vector: the first rows are read in place from the
//! aligned vectors file when it was written for the loaded snapshot
//! ([`AlignedRows`]), the rest (slots appended since, or every slot of an
//! index built in this process) are held here. A slot's row is found by its
//! number, never by looking its content up, so a query costs one pass over
//! a contiguous block of int8 components and no per-chunk decoding.
//!
//! Scores are integer dot products: the goal's vector is rounded to `i16`
//! (its error, about 1/65,000 of its largest component, is far below the
//! int8 rows' own) and multiplied with each row's `i8` components into an
//! `i32`, which the compiler vectorises (`pmaddwd`: eight products and
//! their pairwise sums per instruction on baseline x86-64). The sum is
//! then scaled back by the two per-vector scales: the same cosine as the
//! `f32` product of the dequantised vectors, up to rounding.

use std::sync::Arc;

use crate::vectors_file::{AlignedRows, RowRef};

/// Per-slot vectors: the aligned file's rows, then rows held in memory.
#[derive(Debug, Clone)]
pub(crate) struct Rows {
    dim: usize,
    /// Slots `0..base.len()`, read in place.
    base: Option<Arc<AlignedRows>>,
    /// Slots from `base.len()` on: `dim` int8 components each (as bytes).
    components: Vec<u8>,
    /// Per slot from `base.len()` on: its scale (0: no vector).
    scales: Vec<f32>,
    /// Per slot from `base.len()` on: its content digest (zeros when it has
    /// no vector).
    digests: Vec<[u8; 32]>,
}

/// No digest: a slot without a vector.
const NO_DIGEST: [u8; 32] = [0; 32];

impl Rows {
    /// No rows.
    pub(crate) fn new(dim: usize) -> Rows {
        Rows {
            dim,
            base: None,
            components: Vec::new(),
            scales: Vec::new(),
            digests: Vec::new(),
        }
    }

    /// Rows whose first ones are `base`'s.
    pub(crate) fn on(base: Arc<AlignedRows>, dim: usize) -> Rows {
        Rows {
            base: Some(base),
            ..Rows::new(dim)
        }
    }

    fn base_len(&self) -> usize {
        self.base.as_ref().map_or(0, |b| b.len())
    }

    /// Number of slots covered (with a vector or not).
    pub(crate) fn len(&self) -> usize {
        self.base_len() + self.scales.len()
    }

    /// The aligned file's rows these rows start with.
    pub(crate) fn base(&self) -> Option<&Arc<AlignedRows>> {
        self.base.as_ref()
    }

    /// Slot `slot`'s vector (scale, int8 components) and content digest;
    /// `None` when it has none.
    pub(crate) fn get(&self, slot: usize) -> Option<RowRef<'_>> {
        let (scale, components, digest) = match &self.base {
            Some(b) if slot < b.len() => (b.scale(slot), b.components(slot), b.digest(slot)?),
            _ => {
                let i = slot.checked_sub(self.base_len())?;
                let at = i * self.dim;
                (
                    *self.scales.get(i)?,
                    self.components.get(at..at + self.dim)?,
                    self.digests.get(i)?,
                )
            }
        };
        (scale > 0.0 && components.len() == self.dim).then_some((scale, components, digest))
    }

    /// Appends the next slot's row (`None`: the slot has no vector).
    pub(crate) fn push(&mut self, row: Option<RowRef<'_>>) {
        match row.filter(|(_, q, _)| q.len() == self.dim) {
            Some((scale, q, digest)) => {
                self.scales.push(scale);
                self.components.extend_from_slice(q);
                self.digests.push(*digest);
            }
            None => {
                self.scales.push(0.0);
                self.components.resize(self.components.len() + self.dim, 0);
                self.digests.push(NO_DIGEST);
            }
        }
    }

    /// Calls `f(slot, score)` for every slot with a vector for which
    /// `live(slot)` holds, with `score` the cosine of its vector and the
    /// unit-length `query` (as rounded by [`Query::new`]).
    pub(crate) fn score(&self, query: &Query, live: impl Fn(u32) -> bool, f: impl FnMut(u32, f32)) {
        struct All<F>(F);
        impl<F: FnMut(u32, f32)> Sink for All<F> {
            fn wants(&self, _score: f32) -> bool {
                true
            }
            fn take(&mut self, slot: u32, score: f32) {
                (self.0)(slot, score);
            }
        }
        self.score_range(0..self.len(), query, live, &mut All(f));
    }

    /// [`score`](Self::score) for the slots in `range`, in slot order,
    /// into `sink`. The components and scales are walked as slices (no
    /// per-row lookup): the pass is bound by memory bandwidth, 128 bytes a
    /// row. The per-row work is monomorphised (no call through a pointer
    /// per row: that was a third of the pass's instructions), and a row
    /// the sink does not want by its score alone is not asked about its
    /// liveness.
    fn score_range(
        &self,
        range: std::ops::Range<usize>,
        query: &Query,
        live: impl Fn(u32) -> bool,
        sink: &mut impl Sink,
    ) {
        let dim = self.dim;
        if query.q.len() != dim || dim == 0 {
            return;
        }
        let mut products = Vec::with_capacity(BLOCK_ROWS);
        let base_len = self.base_len();
        if let Some(b) = &self.base {
            let (start, end) = (range.start.min(base_len), range.end.min(base_len));
            if start < end {
                let (components, scales) = b.block(start..end);
                let scales = LeScales(scales);
                visit_rows(
                    query,
                    dim,
                    start,
                    components,
                    scales,
                    &live,
                    sink,
                    &mut products,
                );
            }
        }
        let (start, end) = (
            range.start.max(base_len) - base_len,
            range.end.max(base_len) - base_len,
        );
        let end = end.min(self.scales.len());
        if start < end {
            let components = self.components.get(start * dim..end * dim).unwrap_or(&[]);
            visit_rows(
                query,
                dim,
                start + base_len,
                components,
                &self.scales[start..end],
                &live,
                sink,
                &mut products,
            );
        }
    }

    /// At least the `keep` best-scoring live slots (exactly those scoring
    /// above the `keep`-th best, ties broken by slot), unordered: what a
    /// query needs, without holding a score per chunk. Large indexes are
    /// scored in contiguous parts on several threads (the pass is bound by
    /// memory bandwidth, which more cores share better than one).
    pub(crate) fn top(
        &self,
        query: &Query,
        live: &(dyn Fn(u32) -> bool + Sync),
        keep: usize,
    ) -> Vec<(u32, f32)> {
        let keep = keep.max(1);
        let n = self.len();
        let parts = if n < PARALLEL_ROWS {
            1
        } else {
            std::thread::available_parallelism()
                .map_or(1, |p| p.get())
                .clamp(1, MAX_THREADS)
        };
        let part = n.div_ceil(parts);
        let best_of = |range: std::ops::Range<usize>| {
            let mut top = Top::new(keep);
            self.score_range(range, query, live, &mut top);
            top.into_vec()
        };
        let out = if parts == 1 {
            best_of(0..n)
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (1..parts)
                    .map(|i| {
                        let (start, end) = (i * part, ((i + 1) * part).min(n));
                        std::thread::Builder::new()
                            .name("cgp-semantic".into())
                            .spawn_scoped(scope, move || best_of(start..end))
                            .map_err(|_| start..end)
                    })
                    .collect();
                let mut out = best_of(0..part.min(n));
                for h in handles {
                    match h {
                        Ok(h) => out.extend(h.join().unwrap_or_default()),
                        // No thread: this one scores the part.
                        Err(range) => out.extend(best_of(range)),
                    }
                }
                out
            })
        };
        best_of_parts(out, keep)
    }

    /// The best `keep` of the rows this thread claims from `claims`, a
    /// counter of [`CLAIM_ROWS`]-row parts shared with other threads doing
    /// the same (exactly those scoring above the `keep`-th best of them,
    /// ties broken by slot), unordered. Each thread scores the parts it
    /// claims in ascending order, as the running top needs; once every
    /// part is claimed, the union of the threads' answers holds the best
    /// `keep` of all rows ([`best_of_parts`]). A thread that arrives late
    /// claims what is left, so an answer's thread can join a pass begun
    /// on another once its own work is done.
    pub(crate) fn top_claimed(
        &self,
        query: &Query,
        live: &(dyn Fn(u32) -> bool + Sync),
        keep: usize,
        claims: &std::sync::atomic::AtomicUsize,
    ) -> Vec<(u32, f32)> {
        let n = self.len();
        let mut top = Top::new(keep.max(1));
        loop {
            let part = claims.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let start = part.saturating_mul(CLAIM_ROWS);
            if start >= n {
                break;
            }
            self.score_range(start..(start + CLAIM_ROWS).min(n), query, live, &mut top);
        }
        top.into_vec()
    }
}

/// The best `keep` of the union of the best `keep` of each part of the
/// rows (what [`Rows::top`] and [`Rows::top_claimed`]'s threads found),
/// unordered.
pub(crate) fn best_of_parts(mut out: Vec<(u32, f32)>, keep: usize) -> Vec<(u32, f32)> {
    let keep = keep.max(1);
    if out.len() > keep {
        out.select_nth_unstable_by(keep - 1, crate::semantic::best_first);
        out.truncate(keep);
    }
    out
}

/// Rows a thread claims at a time in [`Rows::top_claimed`]: 2 MB of the
/// model's rows, so a thread that joins late finds parts left to take.
const CLAIM_ROWS: usize = 16_384;

/// Rows below which the scoring pass stays on one thread (a thread costs
/// tens of microseconds; 50,000 rows take about a millisecond).
pub(crate) const PARALLEL_ROWS: usize = 50_000;
/// Most threads one scoring pass uses.
const MAX_THREADS: usize = 4;

/// The best `keep` scores offered in ascending slot order: a score enters
/// only above the current floor (the `keep`-th best so far), so most rows
/// cost one comparison and memory stays `O(keep)`.
struct Top {
    keep: usize,
    scores: Vec<(u32, f32)>,
    floor: f32,
}

impl Top {
    fn new(keep: usize) -> Top {
        Top {
            keep,
            scores: Vec::with_capacity(4 * keep),
            floor: f32::NEG_INFINITY,
        }
    }

    fn shrink(&mut self) {
        if self.scores.len() > self.keep {
            self.scores
                .select_nth_unstable_by(self.keep - 1, crate::semantic::best_first);
            self.scores.truncate(self.keep);
            self.floor = self.scores[self.keep - 1].1;
        }
    }

    fn into_vec(mut self) -> Vec<(u32, f32)> {
        self.shrink();
        self.scores
    }
}

/// A goal's vector rounded for the integer scoring pass.
/// A row's score goes to the sink when the sink wants it by its score
/// ([`Sink::wants`]) and its slot is live: the score is the cheap test,
/// liveness a lookup in the index, so it is asked second (the same rows
/// reach [`Sink::take`] either way).
trait Sink {
    /// Whether a row scoring `score` would be kept.
    fn wants(&self, score: f32) -> bool;
    /// A score no row at or below which is wanted now, if there is one
    /// (`wants(s)` is `s > floor` and the floor only rises): lets the pass
    /// skip a run of rows none of which beats it with one vector test.
    fn floor(&self) -> Option<f32> {
        None
    }
    /// Keeps a live row that [`wants`](Self::wants) accepted.
    fn take(&mut self, slot: u32, score: f32);
}

impl Sink for Top {
    /// Only scores above the running floor can still be among the best: a
    /// later slot ties below an earlier one (ties go to the lower slot),
    /// so a score equal to the floor never enters.
    fn wants(&self, score: f32) -> bool {
        score > self.floor
    }

    /// The running floor: it only rises (each shrink keeps the best
    /// `keep` of a superset of the rows the last one kept).
    fn floor(&self) -> Option<f32> {
        Some(self.floor)
    }

    fn take(&mut self, slot: u32, score: f32) {
        self.scores.push((slot, score));
        if self.scores.len() >= 4 * self.keep {
            self.shrink();
        }
    }
}

/// The scoring pass over contiguous rows (slot `first` on), `dim` int8
/// components each, with their scales: every row with a vector (scale
/// above 0) is scored `dot · scale · query.scale` and offered to `sink`
/// as [`Sink`] says. `products` is the reused block buffer.
#[allow(clippy::too_many_arguments)]
#[inline]
fn visit_rows(
    query: &Query,
    dim: usize,
    first: usize,
    components: &[u8],
    scales: impl Scales,
    live: &impl Fn(u32) -> bool,
    sink: &mut impl Sink,
    products: &mut Vec<i32>,
) {
    for (b, block) in components.chunks(BLOCK_ROWS * dim).enumerate() {
        dots(&query.q, block, products);
        let block_first = first + b * BLOCK_ROWS;
        // Runs of RUN rows: a run none of whose scores beats the sink's
        // floor (most of them, once the best so far are good) costs one
        // branch-free test instead of a test per row. The rows of a run
        // that may hold one are offered exactly as before, in order, each
        // against the floor as it is then. Rows past the last scale are
        // not visited (as the zip of products and scales did).
        for (r, run_dots) in products.chunks(RUN).enumerate() {
            let from = b * BLOCK_ROWS + r * RUN;
            if from >= scales.len() {
                return;
            }
            let run_scales = scales.slice(from..(from + run_dots.len()).min(scales.len()));
            let skip = sink.floor().is_some_and(|floor| {
                !run_scales.fold_rows(run_dots, false, |any, dot, scale| {
                    any | ((scale > 0.0) & (dot as f32 * scale * query.scale > floor))
                })
            });
            if skip {
                continue;
            }
            run_scales.fold_rows(run_dots, r * RUN, |i, dot, scale| {
                if scale > 0.0 {
                    let score = dot as f32 * scale * query.scale;
                    let slot = (block_first + i) as u32;
                    if sink.wants(score) && live(slot) {
                        sink.take(slot, score);
                    }
                }
                i + 1
            });
        }
    }
}

/// The scales of a run of rows: `f32`s in memory, or the little-endian
/// bytes of the mapped base. Walked beside the rows' products without a
/// decoding iterator per row (copying them out through one cost as much
/// as the test it fed).
trait Scales: Copy {
    /// How many rows have a scale.
    fn len(self) -> usize;
    /// The scales of rows `range` (within `len`).
    fn slice(self, range: std::ops::Range<usize>) -> Self;
    /// `f` folded over each row's product and scale, in order, as far as
    /// both go.
    fn fold_rows<B>(self, dots: &[i32], init: B, f: impl FnMut(B, i32, f32) -> B) -> B;
}

impl Scales for &[f32] {
    fn len(self) -> usize {
        <[f32]>::len(self)
    }
    fn slice(self, range: std::ops::Range<usize>) -> Self {
        &self[range]
    }
    fn fold_rows<B>(self, dots: &[i32], init: B, mut f: impl FnMut(B, i32, f32) -> B) -> B {
        dots.iter()
            .zip(self)
            .fold(init, |acc, (&dot, &scale)| f(acc, dot, scale))
    }
}

/// Scales stored as little-endian `f32` bytes (the mapped base).
#[derive(Debug, Clone, Copy)]
struct LeScales<'a>(&'a [u8]);

impl Scales for LeScales<'_> {
    fn len(self) -> usize {
        self.0.len() / 4
    }
    fn slice(self, range: std::ops::Range<usize>) -> Self {
        LeScales(&self.0[range.start * 4..range.end * 4])
    }
    fn fold_rows<B>(self, dots: &[i32], init: B, mut f: impl FnMut(B, i32, f32) -> B) -> B {
        dots.iter()
            .zip(self.0.chunks_exact(4))
            .fold(init, |acc, (&dot, x)| {
                f(acc, dot, f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
            })
    }
}

/// Rows tested together against the sink's floor (see [`visit_rows`]).
const RUN: usize = 16;

#[derive(Debug)]
pub(crate) struct Query {
    q: Vec<i16>,
    scale: f32,
}

impl Query {
    /// `v` rounded to `i16` with one scale: its largest magnitude maps to
    /// 32,767, or less when `v` is so long that `len × 127 × top` could
    /// leave `i32` (over 516 dimensions), so the integer sum never
    /// overflows whatever the rows hold.
    pub(crate) fn new(v: &[f32]) -> Query {
        let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let top = (i32::MAX as usize / (127 * v.len().max(1))).min(32767) as f32;
        if !(max > 0.0 && max.is_finite() && top >= 1.0) {
            return Query {
                q: vec![0; v.len()],
                scale: 0.0,
            };
        }
        let scale = max / top;
        Query {
            q: v.iter()
                .map(|x| (x / scale).round().clamp(-top, top) as i16)
                .collect(),
            scale,
        }
    }
}

/// Rows per call of [`dots`]: its products fit in a few kilobytes.
const BLOCK_ROWS: usize = 1024;

#[path = "semantic_kernels.rs"]
mod kernels;
use kernels::dots;

#[cfg(test)]
mod tests {
    use super::*;

    /// The best `keep` of a pass split over threads, with a running floor
    /// and many ties, are exactly the first `keep` of every score sorted
    /// (best first, ties by slot); dead slots and rows without a vector
    /// are never returned.
    #[test]
    fn the_running_top_equals_the_head_of_the_full_sort() {
        let dim = 16;
        let mut rows = Rows::new(dim);
        let n = PARALLEL_ROWS + 10_000;
        for i in 0..n {
            // Few distinct rows: most scores tie with many others.
            let v: Vec<u8> = (0..dim).map(|d| ((i % 23) * (d + 3) % 251) as u8).collect();
            let digest = [(i % 251) as u8; 32];
            let row =
                (!i.is_multiple_of(17)).then_some((0.01 + (i % 5) as f32 * 0.001, &v[..], &digest));
            rows.push(row);
        }
        let query = Query::new(&(0..dim).map(|d| d as f32 - 7.5).collect::<Vec<_>>());
        let live = |s: u32| !s.is_multiple_of(11);
        let mut all = Vec::new();
        rows.score(&query, live, |s, x| all.push((s, x)));
        all.sort_by(crate::semantic::best_first);
        for keep in [1, 30, 256, 5_000] {
            let mut top = rows.top(&query, &live, keep);
            top.sort_by(crate::semantic::best_first);
            assert_eq!(top, all[..keep], "keep {keep}");
            // Parts claimed by two threads, and by one (the other came
            // when none was left).
            for late in [false, true] {
                let claims = std::sync::atomic::AtomicUsize::new(0);
                let claim = || rows.top_claimed(&query, &live, keep, &claims);
                let (mut a, b) = if late {
                    let a = claim();
                    (a, claim())
                } else {
                    std::thread::scope(|s| {
                        let other = s.spawn(claim);
                        let a = claim();
                        (a, other.join().expect("scored"))
                    })
                };
                assert!(!late || b.is_empty());
                a.extend(b);
                let mut top = best_of_parts(a, keep);
                top.sort_by(crate::semantic::best_first);
                assert_eq!(top, all[..keep], "keep {keep}, claimed, late {late}");
            }
        }
        assert!(all.iter().all(|&(s, _)| live(s) && !s.is_multiple_of(17)));
    }
}
