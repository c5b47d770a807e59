//! Contrastive training of the token table for retrieval: each mined pair's
//! query (a comment) should embed closer to its own code than to the other
//! pairs' code in the batch (in-batch negatives, symmetric InfoNCE).
//!
//! Why: the co-occurrence SVD places a word next to the words it appears
//! with, which is not what search asks. Search asks that a goal's vector be
//! nearest to the chunk that answers it, among all chunks. InfoNCE over
//! (doc comment, documented code) pairs trains exactly that, with the same
//! encoder the index uses (weighted mean of token rows, normalised), so
//! the file format, the loader and [`crate::StaticModel::encode`] are
//! untouched: only the rows change.
//!
//! The model: `v = Σ w_t · E_t` over a text's tokens (each occurrence
//! counted, `w` the fixed inverse-frequency pooling weights), `q = v/|v|`.
//! For a batch of `B` pairs, `S_ij = q_i · d_j / τ`; the loss is the mean of
//! the row-wise and column-wise cross-entropies with the diagonal as the
//! target. Its gradient reaches the rows through the normalisation:
//! `dL/dv = (g − (g·q) q) / |v|` and `dL/dE_t += w_t · dL/dv`. Rows are
//! updated by Adam, only those a batch touched (lazy Adam: a row's moments
//! decay only when it is used), optionally pulled towards their starting
//! value (`anchor`), which keeps the co-occurrence structure of words the
//! pairs rarely see.
//!
//! Deterministic: one thread, a seeded shuffle, inputs in the caller's
//! (sorted) order; a second run gives the same bits.

use std::time::Instant;

use super::svd::SplitMix;

/// One training pair as token ids (rows of the table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenPair {
    /// The query side's tokens, in text order.
    pub query: Vec<u32>,
    /// The document side's tokens, in text order.
    pub doc: Vec<u32>,
    /// The package the pair comes from (see
    /// [`ContrastiveConfig::package_batches`]).
    pub group: u32,
}

/// The trained table: `vocab × dim` rows and the fixed pooling weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Vector length.
    pub dim: usize,
    /// Row-major `vocab × dim`.
    pub vectors: Vec<f32>,
    /// Pooling weight per row.
    pub weights: Vec<f32>,
}

impl Table {
    /// Rows in the table.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Writes `Σ w_t E_t` over `ids` into `out` and returns its length.
    pub fn pool(&self, ids: &[u32], out: &mut [f32]) -> f32 {
        out.iter_mut().for_each(|x| *x = 0.0);
        for &t in ids {
            let t = t as usize;
            let w = self.weights[t];
            let row = &self.vectors[t * self.dim..(t + 1) * self.dim];
            out.iter_mut().zip(row).for_each(|(o, r)| *o += w * r);
        }
        out.iter().map(|x| x * x).sum::<f32>().sqrt()
    }
}

/// Parameters of a contrastive run.
#[derive(Debug, Clone)]
pub struct ContrastiveConfig {
    /// Pairs per batch (each pair's negatives are the batch's other pairs).
    pub batch_size: usize,
    /// Softmax temperature `τ`.
    pub temperature: f32,
    /// Passes over the training pairs.
    pub epochs: usize,
    /// Adam step size.
    pub learning_rate: f32,
    /// Pull of each updated row towards its starting value (L2, 0: off).
    pub anchor: f32,
    /// Share of the pairs held out to report the validation loss.
    pub validation_share: f32,
    /// Seed of the shuffles.
    pub seed: u64,
    /// Fill each batch with pairs of as few packages as possible (the
    /// packages in a shuffled order, each one's pairs shuffled), instead of
    /// pairs drawn from the whole corpus. Why: search ranks the chunks of
    /// one project against each other; with negatives from other packages
    /// the loss is mostly won by telling languages and projects apart, with
    /// negatives from the same package only by what the code does.
    pub package_batches: bool,
}

impl Default for ContrastiveConfig {
    fn default() -> Self {
        Self {
            batch_size: 512,
            temperature: 0.05,
            epochs: 2,
            learning_rate: 1e-3,
            anchor: 0.0,
            validation_share: 0.02,
            seed: 0x00c0_ffee,
            package_batches: false,
        }
    }
}

/// Figures from a contrastive run.
#[derive(Debug, Clone, Default)]
pub struct ContrastiveReport {
    /// Pairs trained on.
    pub train_pairs: usize,
    /// Pairs held out.
    pub validation_pairs: usize,
    /// Optimiser steps taken.
    pub steps: usize,
    /// Validation (loss, share of queries whose own code ranks first in
    /// their batch), before training and after each epoch.
    pub validation: Vec<(f64, f64)>,
    /// Mean training loss per epoch.
    pub epoch_loss: Vec<f64>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Gradient of one batch, dense over the table, with the rows it touched.
#[derive(Debug)]
pub struct Gradient {
    dim: usize,
    /// Row-major, same shape as [`Table::vectors`].
    pub values: Vec<f32>,
    /// Rows with a non-zero gradient, in first-touch order.
    pub touched: Vec<u32>,
    marked: Vec<bool>,
}

impl Gradient {
    /// A zero gradient for `table`.
    pub fn new(table: &Table) -> Self {
        Self {
            dim: table.dim,
            values: vec![0.0; table.vectors.len()],
            touched: Vec::new(),
            marked: vec![false; table.len()],
        }
    }

    fn add(&mut self, row: u32, scale: f32, v: &[f32]) {
        let r = row as usize;
        if !self.marked[r] {
            self.marked[r] = true;
            self.touched.push(row);
        }
        let dst = &mut self.values[r * self.dim..(r + 1) * self.dim];
        dst.iter_mut().zip(v).for_each(|(d, x)| *d += scale * x);
    }

    /// Zeroes the touched rows.
    pub fn clear(&mut self) {
        for &r in &self.touched {
            let r = r as usize;
            self.values[r * self.dim..(r + 1) * self.dim].fill(0.0);
            self.marked[r] = false;
        }
        self.touched.clear();
    }
}

/// Normalised vectors of one side of a batch, with each text's `|v|`.
fn side(table: &Table, texts: &[&[u32]]) -> (Vec<f32>, Vec<f32>) {
    let d = table.dim;
    let mut vecs = vec![0.0f32; texts.len() * d];
    let mut norms = vec![0.0f32; texts.len()];
    for (i, ids) in texts.iter().enumerate() {
        let out = &mut vecs[i * d..(i + 1) * d];
        let n = table.pool(ids, out);
        norms[i] = n;
        if n > 0.0 {
            out.iter_mut().for_each(|x| *x /= n);
        }
    }
    (vecs, norms)
}

/// Loss of one batch (symmetric InfoNCE, mean over pairs) and the number of
/// queries whose own document scores highest; when `grad` is given, adds
/// the loss's gradient with respect to the table's rows into it. Pairs
/// whose query or document has no weighted token (zero vector) should be
/// filtered out before; they contribute no gradient.
pub fn batch_loss(
    table: &Table,
    batch: &[&TokenPair],
    temperature: f32,
    grad: Option<&mut Gradient>,
) -> (f64, usize) {
    let b = batch.len();
    let d = table.dim;
    if b == 0 {
        return (0.0, 0);
    }
    let queries: Vec<&[u32]> = batch.iter().map(|p| p.query.as_slice()).collect();
    let docs: Vec<&[u32]> = batch.iter().map(|p| p.doc.as_slice()).collect();
    let (q, qn) = side(table, &queries);
    let (k, kn) = side(table, &docs);
    // Scores, then row and column softmaxes (in f64: the logits reach 1/τ).
    let mut s = vec![0.0f64; b * b];
    for i in 0..b {
        let qi = &q[i * d..(i + 1) * d];
        for j in 0..b {
            let kj = &k[j * d..(j + 1) * d];
            let dot: f32 = qi.iter().zip(kj).map(|(x, y)| x * y).sum();
            s[i * b + j] = f64::from(dot) / f64::from(temperature);
        }
    }
    let mut rows = vec![0.0f64; b * b];
    let mut cols = vec![0.0f64; b * b];
    let mut loss = 0.0f64;
    let mut first = 0usize;
    for i in 0..b {
        let row = &s[i * b..(i + 1) * b];
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|x| (x - max).exp()).sum();
        for j in 0..b {
            rows[i * b + j] = (row[j] - max).exp() / sum;
        }
        loss += -(row[i] - max - sum.ln());
        if (0..b).all(|j| j == i || row[j] < row[i]) {
            first += 1;
        }
    }
    for j in 0..b {
        let max = (0..b)
            .map(|i| s[i * b + j])
            .fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = (0..b).map(|i| (s[i * b + j] - max).exp()).sum();
        for i in 0..b {
            cols[i * b + j] = (s[i * b + j] - max).exp() / sum;
        }
        loss += -(s[j * b + j] - max - sum.ln());
    }
    let loss = loss / (2.0 * b as f64);
    let Some(grad) = grad else {
        return (loss, first);
    };
    // dL/dS_ij, then through S = q·k/τ to the unit vectors.
    let scale = 1.0 / (2.0 * b as f64);
    let mut gq = vec![0.0f32; b * d];
    let mut gk = vec![0.0f32; b * d];
    for i in 0..b {
        for j in 0..b {
            let target = if i == j { 2.0 } else { 0.0 };
            let g = ((rows[i * b + j] + cols[i * b + j] - target) * scale / f64::from(temperature))
                as f32;
            if g == 0.0 {
                continue;
            }
            for x in 0..d {
                gq[i * d + x] += g * k[j * d + x];
                gk[j * d + x] += g * q[i * d + x];
            }
        }
    }
    // Through the normalisation and the weighted sum to the rows.
    let mut dv = vec![0.0f32; d];
    for (texts, unit, norms, g) in [(&queries, &q, &qn, &gq), (&docs, &k, &kn, &gk)] {
        for (i, ids) in texts.iter().enumerate() {
            let n = norms[i];
            if n <= 0.0 {
                continue;
            }
            let u = &unit[i * d..(i + 1) * d];
            let gi = &g[i * d..(i + 1) * d];
            let along: f32 = gi.iter().zip(u).map(|(a, b)| a * b).sum();
            for x in 0..d {
                dv[x] = (gi[x] - along * u[x]) / n;
            }
            for &t in ids.iter() {
                grad.add(t, table.weights[t as usize], &dv);
            }
        }
    }
    (loss, first)
}

/// Lazy Adam over the table's rows.
struct Adam {
    m: Vec<f32>,
    v: Vec<f32>,
    step: i32,
}

const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPSILON: f32 = 1e-8;

impl Adam {
    fn update(
        &mut self,
        table: &mut Table,
        start: &[f32],
        grad: &Gradient,
        config: &ContrastiveConfig,
    ) {
        self.step += 1;
        let c1 = 1.0 - BETA1.powi(self.step);
        let c2 = 1.0 - BETA2.powi(self.step);
        let d = table.dim;
        for &r in &grad.touched {
            let span = r as usize * d..(r as usize + 1) * d;
            for x in span {
                let g = grad.values[x] + config.anchor * (table.vectors[x] - start[x]);
                self.m[x] = BETA1 * self.m[x] + (1.0 - BETA1) * g;
                self.v[x] = BETA2 * self.v[x] + (1.0 - BETA2) * g * g;
                let step =
                    config.learning_rate * (self.m[x] / c1) / ((self.v[x] / c2).sqrt() + EPSILON);
                table.vectors[x] -= step;
            }
        }
    }
}

/// Shuffles `items` in place (Fisher–Yates) from `rng`.
fn shuffle<T>(items: &mut [T], rng: &mut SplitMix) {
    for i in (1..items.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// Reorders shuffled pairs so each package's pairs are adjacent, the
/// packages in a random order (a pair's place within its package stays
/// the shuffled one).
fn order_by_package(pairs: &mut [&TokenPair], rng: &mut SplitMix) {
    let groups = pairs
        .iter()
        .map(|p| p.group)
        .max()
        .map_or(0, |g| g as usize + 1);
    let keys: Vec<u64> = (0..groups).map(|_| rng.next()).collect();
    // Stable: within a package, the shuffled order is kept.
    pairs.sort_by_key(|p| (keys[p.group as usize], p.group));
}

/// Validation loss and top-1 share over `pairs`, in fixed batches.
fn validate(table: &Table, pairs: &[&TokenPair], config: &ContrastiveConfig) -> (f64, f64) {
    let mut loss = 0.0;
    let mut first = 0;
    let mut batches = 0;
    let mut counted = 0;
    for batch in pairs.chunks(config.batch_size) {
        if batch.len() < 2 {
            continue;
        }
        let (l, f) = batch_loss(table, batch, config.temperature, None);
        loss += l;
        first += f;
        batches += 1;
        counted += batch.len();
    }
    (
        loss / f64::from(batches.max(1)),
        first as f64 / counted.max(1) as f64,
    )
}

/// Trains `table` on `pairs` (in the caller's order, which should be
/// sorted or otherwise deterministic). Pairs with an empty side are
/// dropped; a seeded share is held out for the validation figures.
pub fn train_contrastive(
    table: &mut Table,
    pairs: &[TokenPair],
    config: &ContrastiveConfig,
) -> ContrastiveReport {
    let start_clock = Instant::now();
    let mut rng = SplitMix(config.seed);
    let mut usable: Vec<&TokenPair> = pairs
        .iter()
        .filter(|p| {
            let weighted = |ids: &[u32]| ids.iter().any(|&t| table.weights[t as usize] > 0.0);
            weighted(&p.query) && weighted(&p.doc)
        })
        .collect();
    shuffle(&mut usable, &mut rng);
    if config.package_batches {
        // Validation batches as hard as the training ones.
        order_by_package(&mut usable, &mut rng);
    }
    let held = ((usable.len() as f64) * f64::from(config.validation_share)).round() as usize;
    let (validation, train) = usable.split_at(held.min(usable.len()));
    let mut train: Vec<&TokenPair> = train.to_vec();
    let mut report = ContrastiveReport {
        train_pairs: train.len(),
        validation_pairs: validation.len(),
        ..ContrastiveReport::default()
    };
    report.validation.push(validate(table, validation, config));
    let start = table.vectors.clone();
    let mut grad = Gradient::new(table);
    let mut adam = Adam {
        m: vec![0.0; table.vectors.len()],
        v: vec![0.0; table.vectors.len()],
        step: 0,
    };
    for _ in 0..config.epochs {
        shuffle(&mut train, &mut rng);
        if config.package_batches {
            order_by_package(&mut train, &mut rng);
        }
        let mut sum = 0.0;
        let mut batches = 0;
        for batch in train.chunks(config.batch_size) {
            if batch.len() < 2 {
                continue;
            }
            grad.clear();
            let (loss, _) = batch_loss(table, batch, config.temperature, Some(&mut grad));
            adam.update(table, &start, &grad, config);
            sum += loss;
            batches += 1;
            report.steps += 1;
        }
        report.epoch_loss.push(sum / f64::from(batches.max(1)));
        report.validation.push(validate(table, validation, config));
    }
    report.seconds = start_clock.elapsed().as_secs_f64();
    report
}

#[cfg(test)]
mod tests {
    use super::{
        batch_loss, order_by_package, shuffle, train_contrastive, ContrastiveConfig, Gradient,
        Table, TokenPair,
    };
    use crate::train::svd::SplitMix;

    fn tiny() -> (Table, Vec<TokenPair>) {
        let dim = 4;
        let rows = 7;
        let vectors: Vec<f32> = (0..rows * dim)
            .map(|i| ((i * 37 % 11) as f32 - 5.0) / 7.0)
            .collect();
        let weights = vec![1.0, 0.5, 2.0, 1.5, 0.7, 1.2, 0.0];
        let pairs = vec![
            TokenPair {
                query: vec![0, 1],
                doc: vec![2, 3, 3],
                group: 0,
            },
            TokenPair {
                query: vec![4],
                doc: vec![5, 0, 6],
                group: 1,
            },
            TokenPair {
                query: vec![2, 5],
                doc: vec![1, 4],
                group: 0,
            },
        ];
        (
            Table {
                dim,
                vectors,
                weights,
            },
            pairs,
        )
    }

    #[test]
    fn package_batches_keep_each_packages_pairs_together_in_shuffled_order() {
        let pairs: Vec<TokenPair> = (0..40u32)
            .map(|i| TokenPair {
                query: vec![i],
                doc: vec![i],
                group: i % 4,
            })
            .collect();
        let mut order: Vec<&TokenPair> = pairs.iter().collect();
        let mut rng = SplitMix(7);
        shuffle(&mut order, &mut rng);
        let shuffled: Vec<u32> = order.iter().map(|p| p.query[0]).collect();
        order_by_package(&mut order, &mut rng);
        let groups: Vec<u32> = order.iter().map(|p| p.group).collect();
        let runs = groups.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(runs, 3, "four packages, each one run: {groups:?}");
        // Within a package, the shuffled order is kept.
        for g in 0..4 {
            let kept: Vec<u32> = order
                .iter()
                .filter(|p| p.group == g)
                .map(|p| p.query[0])
                .collect();
            let before: Vec<u32> = shuffled.iter().copied().filter(|q| q % 4 == g).collect();
            assert_eq!(kept, before);
        }
    }

    #[test]
    fn the_gradient_matches_finite_differences() {
        let (table, pairs) = tiny();
        let batch: Vec<&TokenPair> = pairs.iter().collect();
        let mut grad = Gradient::new(&table);
        batch_loss(&table, &batch, 0.5, Some(&mut grad));
        let h = 1e-3f32;
        let mut worst = 0.0f64;
        for x in 0..table.vectors.len() {
            let mut plus = table.clone();
            plus.vectors[x] += h;
            let mut minus = table.clone();
            minus.vectors[x] -= h;
            let numeric = (batch_loss(&plus, &batch, 0.5, None).0
                - batch_loss(&minus, &batch, 0.5, None).0)
                / (2.0 * f64::from(h));
            let analytic = f64::from(grad.values[x]);
            worst = worst.max((numeric - analytic).abs());
        }
        assert!(worst < 2e-3, "largest gap to finite differences {worst}");
        // Row 6 has weight 0: no gradient reaches it.
        assert!(grad.values[6 * 4..7 * 4].iter().all(|&g| g == 0.0));
        assert!(grad.values.iter().any(|&g| g.abs() > 1e-3));
    }

    #[test]
    fn training_lowers_the_loss_and_is_deterministic() {
        let (table, pairs) = tiny();
        let batch: Vec<&TokenPair> = pairs.iter().collect();
        let before = batch_loss(&table, &batch, 0.5, None).0;
        let config = ContrastiveConfig {
            batch_size: 3,
            temperature: 0.5,
            epochs: 50,
            learning_rate: 0.01,
            validation_share: 0.0,
            ..ContrastiveConfig::default()
        };
        let mut a = table.clone();
        let report = train_contrastive(&mut a, &pairs, &config);
        let after = batch_loss(&a, &batch, 0.5, None).0;
        assert!(after < before - 0.05, "{before} -> {after}");
        assert_eq!(report.steps, 50);
        let mut b = table.clone();
        train_contrastive(&mut b, &pairs, &config);
        assert_eq!(a, b, "a second run gives the same table");
    }

    #[test]
    fn the_anchor_keeps_rows_near_their_start() {
        let (table, pairs) = tiny();
        let config = ContrastiveConfig {
            batch_size: 3,
            temperature: 0.5,
            epochs: 200,
            learning_rate: 0.01,
            validation_share: 0.0,
            ..ContrastiveConfig::default()
        };
        let drift = |t: &Table| -> f32 {
            t.vectors
                .iter()
                .zip(&table.vectors)
                .map(|(a, b)| (a - b) * (a - b))
                .sum()
        };
        let mut free = table.clone();
        train_contrastive(&mut free, &pairs, &config);
        let mut held = table.clone();
        train_contrastive(
            &mut held,
            &pairs,
            &ContrastiveConfig {
                anchor: 5.0,
                ..config
            },
        );
        assert!(
            drift(&held) < drift(&free) * 0.8,
            "{} vs {}",
            drift(&held),
            drift(&free)
        );
    }
}
