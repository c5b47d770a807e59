//! The whole training run, from documents to a [`ModelSpec`].

use std::collections::BTreeMap;
use std::time::Instant;

use super::cooccur::Cooccurrence;
use super::ppmi::ppmi;
use super::svd::randomized_svd;
use super::vocab::VocabCounter;
use crate::writer::ModelSpec;

/// Training parameters; [`TrainConfig::default`] is what built the shipped
/// model.
#[derive(Debug, Clone)]
pub struct TrainConfig {
    /// Most tokens kept.
    pub vocab_size: usize,
    /// Least number of groups (crates) a token must occur in.
    pub min_groups: u32,
    /// Least corpus frequency of a token.
    pub min_count: u64,
    /// Vector length.
    pub dim: usize,
    /// Neighbours on each side counted as co-occurring.
    pub window: usize,
    /// Weight a neighbour at distance `d` by `1/d` (true) or count every
    /// neighbour in the window alike (false, more topical).
    pub harmonic: bool,
    /// Weight of doc-comment ↔ documented-code pairs (0: off); see
    /// [`super::align`].
    pub align_weight: f32,
    /// Lines per chunk for the pooling weights' frequencies.
    pub chunk_lines: usize,
    /// Context-distribution smoothing exponent.
    pub alpha: f64,
    /// Pairs with less summed weight are ignored.
    pub min_pair_weight: f32,
    /// Singular-value exponent `p` in `U·Σ^p`.
    pub eig_power: f64,
    /// Extra random directions in the range finder.
    pub oversample: usize,
    /// Subspace-iteration rounds.
    pub power_iters: usize,
    /// Seed of the random start.
    pub seed: u64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            vocab_size: 30_000,
            min_groups: 2,
            min_count: 5,
            dim: 128,
            window: 8,
            harmonic: true,
            align_weight: 3.0,
            chunk_lines: 50,
            alpha: 0.75,
            min_pair_weight: 1.0,
            eig_power: 0.5,
            oversample: 16,
            power_iters: 3,
            seed: 0x00c0_ffee,
        }
    }
}

/// Figures from a training run, for the README and the log.
#[derive(Debug, Clone, Default)]
pub struct TrainReport {
    /// Documents read.
    pub documents: usize,
    /// Tokens kept in the vocabulary (before dropping vectorless ones).
    pub vocab: usize,
    /// Tokens exported (those with a non-zero vector).
    pub exported: usize,
    /// Distinct co-occurring pairs.
    pub pairs: usize,
    /// Non-zero PPMI entries.
    pub ppmi_nnz: usize,
    /// Chunks counted for the pooling weights.
    pub chunks: u64,
    /// The largest singular values.
    pub top_singular_values: Vec<f64>,
    /// Seconds per stage: vocabulary, co-occurrence, PPMI, SVD, export.
    pub stage_seconds: [f64; 5],
}

/// A trained model, ready to write.
#[derive(Debug, Clone)]
pub struct TrainedModel {
    /// The model (vectors unit length, weights = inverse chunk frequency).
    pub spec: ModelSpec,
    /// What the run did.
    pub report: TrainReport,
}

/// Trains on `docs`, pairs of `(group, text)`; documents of one group must
/// be adjacent. `docs` is called twice, once per pass, and must yield the
/// same documents both times.
pub fn train<'a, I>(docs: impl Fn() -> I, config: &TrainConfig, name: &str) -> TrainedModel
where
    I: Iterator<Item = (&'a str, &'a str)>,
{
    let mut report = TrainReport::default();
    let mut clock = Instant::now();
    let mut lap = |slot: &mut f64| {
        *slot = clock.elapsed().as_secs_f64();
        clock = Instant::now();
    };

    let mut counter = VocabCounter::new();
    for (group, text) in docs() {
        counter.add(group, text);
        report.documents += 1;
    }
    let vocab = counter.finish(config.vocab_size, config.min_groups, config.min_count);
    report.vocab = vocab.len();
    lap(&mut report.stage_seconds[0]);

    let mut cooc = Cooccurrence::new(
        vocab.len(),
        config.window,
        config.chunk_lines,
        config.harmonic,
    )
    .with_alignment(config.align_weight);
    for (_, text) in docs() {
        cooc.add(text, &vocab);
    }
    report.pairs = cooc.pair_count();
    report.chunks = cooc.chunk_count();
    lap(&mut report.stage_seconds[1]);

    let matrix = ppmi(&cooc, vocab.len(), config.alpha, config.min_pair_weight);
    report.ppmi_nnz = matrix.nnz();
    lap(&mut report.stage_seconds[2]);

    let svd = randomized_svd(
        &matrix,
        config.dim,
        config.oversample,
        config.power_iters,
        config.seed,
    );
    report.top_singular_values = svd.values.iter().take(8).copied().collect();
    lap(&mut report.stage_seconds[3]);

    let scale: Vec<f64> = svd
        .values
        .iter()
        .map(|s| s.powf(config.eig_power))
        .collect();
    let n_chunks = cooc.chunk_count() as f64;
    let mut tokens = Vec::new();
    let mut vectors = Vec::new();
    let mut weights = Vec::new();
    for (row, token) in vocab.tokens.iter().enumerate() {
        let u = &svd.u[row * svd.k..(row + 1) * svd.k];
        let v: Vec<f64> = u.iter().zip(&scale).map(|(x, s)| x * s).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !(norm.is_finite() && norm > 1e-12) {
            continue;
        }
        tokens.push(token.clone());
        vectors.extend(v.iter().map(|x| (x / norm) as f32));
        let df = f64::from(cooc.chunk_df()[row]);
        weights.push(((n_chunks + 1.0) / (df + 1.0)).ln() as f32);
    }
    report.exported = tokens.len();
    lap(&mut report.stage_seconds[4]);

    let mut metadata = BTreeMap::new();
    metadata.insert(
        "training".to_string(),
        format!(
            "PPMI+SVD: window {} ({}), doc-comment alignment {}, alpha {}, min pair weight {}, U*S^{}, randomized SVD (oversample {}, {} power iterations, seed {}); weights ln((chunks+1)/(df+1)) over {}-line chunks; vocabulary: top {} tokens in >= {} groups, >= {} occurrences",
            config.window,
            if config.harmonic { "1/d" } else { "uniform" },
            config.align_weight,
            config.alpha,
            config.min_pair_weight,
            config.eig_power,
            config.oversample,
            config.power_iters,
            config.seed,
            config.chunk_lines,
            config.vocab_size,
            config.min_groups,
            config.min_count
        ),
    );
    TrainedModel {
        spec: ModelSpec {
            name: name.to_string(),
            tokens,
            dim: svd.k,
            vectors,
            weights: Some(weights),
            metadata,
        },
        report,
    }
}
