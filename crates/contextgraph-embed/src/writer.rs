//! Writes a model in the layout [`crate::StaticModel`] reads.
//!
//! The trainer uses this to export what it learned, and tests use it to
//! build tiny models, so the reader is always tested against the writer and
//! the writer against the reader.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::model::{
    f32_to_f16, EMBEDDINGS_TENSOR, NAME_KEY, SCALES_TENSOR, TOKENIZER_KEY, VOCAB_KEY,
    WEIGHTS_TENSOR,
};
use crate::safetensors::{self, dtype, TensorData};
use crate::tokenize::TOKENIZER_NAME;

/// How the embeddings are stored in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// 4 bytes per value, exact.
    Float32,
    /// 2 bytes per value, IEEE half precision.
    Float16,
    /// 1 byte per value plus a per-row `f32` scale (`value = q * scale`,
    /// `scale = max |row| / 127`): the smallest, and for unit-length rows the
    /// error is below 1% of a cosine.
    Int8,
}

/// What a model is made of, before it is written.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    /// Human-readable name stored in the metadata.
    pub name: String,
    /// One token per row, as the tokenizer produces them.
    pub tokens: Vec<String>,
    /// Vector length.
    pub dim: usize,
    /// `tokens.len() * dim` values, row-major.
    pub vectors: Vec<f32>,
    /// Optional per-token pooling weights, one per row.
    pub weights: Option<Vec<f32>>,
    /// Further metadata (training corpus, command, licence note …).
    pub metadata: BTreeMap<String, String>,
}

/// The spec's parts do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid model spec: {0}")]
pub struct InvalidModelSpec(pub String);

impl ModelSpec {
    /// Serialises the model into safetensors bytes with the vocabulary in
    /// the metadata.
    pub fn to_safetensors(&self, storage: Storage) -> Result<Vec<u8>, InvalidModelSpec> {
        let rows = self.tokens.len();
        if rows == 0 || self.dim == 0 {
            return Err(InvalidModelSpec(
                "a model needs at least one token and one dimension".into(),
            ));
        }
        if self.vectors.len() != rows * self.dim {
            return Err(InvalidModelSpec(format!(
                "{} values for {rows} tokens of dimension {}",
                self.vectors.len(),
                self.dim
            )));
        }
        if let Some(t) = self
            .tokens
            .iter()
            .find(|t| t.is_empty() || t.contains(char::is_whitespace))
        {
            return Err(InvalidModelSpec(format!(
                "token {t:?} is empty or holds whitespace"
            )));
        }
        let shape = vec![rows as u64, self.dim as u64];
        let mut tensors = Vec::new();
        match storage {
            Storage::Float32 => tensors.push(TensorData {
                name: EMBEDDINGS_TENSOR.into(),
                dtype: dtype::FLOAT32.into(),
                shape,
                bytes: f32_bytes(&self.vectors),
            }),
            Storage::Float16 => tensors.push(TensorData {
                name: EMBEDDINGS_TENSOR.into(),
                dtype: dtype::FLOAT16.into(),
                shape,
                bytes: self
                    .vectors
                    .iter()
                    .flat_map(|&v| f32_to_f16(v).to_le_bytes())
                    .collect(),
            }),
            Storage::Int8 => {
                let (q, scales) = quantize_rows(&self.vectors, self.dim);
                tensors.push(TensorData {
                    name: EMBEDDINGS_TENSOR.into(),
                    dtype: "I8".into(),
                    shape,
                    bytes: q,
                });
                tensors.push(TensorData {
                    name: SCALES_TENSOR.into(),
                    dtype: dtype::FLOAT32.into(),
                    shape: vec![rows as u64],
                    bytes: f32_bytes(&scales),
                });
            }
        }
        if let Some(w) = &self.weights {
            if w.len() != rows {
                return Err(InvalidModelSpec(format!(
                    "{} weights for {rows} tokens",
                    w.len()
                )));
            }
            tensors.push(TensorData {
                name: WEIGHTS_TENSOR.into(),
                dtype: dtype::FLOAT32.into(),
                shape: vec![rows as u64],
                bytes: f32_bytes(w),
            });
        }
        let mut metadata = self.metadata.clone();
        metadata.insert(NAME_KEY.into(), self.name.clone());
        metadata.insert(TOKENIZER_KEY.into(), TOKENIZER_NAME.into());
        metadata.insert(VOCAB_KEY.into(), self.tokens.join("\n"));
        Ok(safetensors::write(&tensors, &metadata))
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Symmetric per-row int8 quantisation: each row's largest magnitude maps
/// to 127.
fn quantize_rows(vectors: &[f32], dim: usize) -> (Vec<u8>, Vec<f32>) {
    let mut q = Vec::with_capacity(vectors.len());
    let mut scales = Vec::with_capacity(vectors.len() / dim);
    for row in vectors.chunks_exact(dim) {
        let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
        scales.push(scale);
        q.extend(row.iter().map(|&v| {
            let level = if scale > 0.0 {
                (v / scale).round().clamp(-127.0, 127.0)
            } else {
                0.0
            };
            (level as i8) as u8
        }));
    }
    (q, scales)
}
