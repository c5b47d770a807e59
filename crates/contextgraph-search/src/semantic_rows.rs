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
    pub(crate) fn score(
        &self,
        query: &Query,
        live: impl Fn(u32) -> bool,
        mut f: impl FnMut(u32, f32),
    ) {
        if query.q.len() != self.dim {
            return;
        }
        if let Some(b) = &self.base {
            for slot in 0..b.len() {
                let scale = b.scale(slot);
                if scale > 0.0 && live(slot as u32) {
                    let dot = dot_i8(&query.q, b.components(slot));
                    f(slot as u32, dot as f32 * scale * query.scale);
                }
            }
        }
        let first = self.base_len();
        let rows = self.components.chunks_exact(self.dim.max(1));
        for (i, (q, &scale)) in rows.zip(&self.scales).enumerate() {
            let slot = (first + i) as u32;
            if scale > 0.0 && live(slot) {
                f(slot, dot_i8(&query.q, q) as f32 * scale * query.scale);
            }
        }
    }
}

/// A goal's vector rounded for the integer scoring pass.
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

/// The integer dot product of a rounded goal and an int8 row (its bytes).
/// Written as a plain zip-sum so the compiler vectorises it; the goal's
/// rounding ([`Query::new`]) keeps the `i32` sum from overflowing.
#[inline]
fn dot_i8(query: &[i16], row: &[u8]) -> i32 {
    query
        .iter()
        .zip(row)
        .map(|(&q, &r)| i32::from(q) * i32::from(r as i8))
        .sum()
}
