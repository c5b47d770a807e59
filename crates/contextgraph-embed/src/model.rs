//! A static embedding model: one vector per vocabulary token, loaded from a
//! safetensors file and checked strictly.
//!
//! The layout follows the model2vec convention (an `embeddings` tensor of
//! shape `[vocab, dim]`) with the vocabulary carried in the file's metadata,
//! so one file is the whole model. See the crate README for the full layout.

use std::borrow::Cow;
use std::path::Path;

use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};

use crate::error::ModelError;
use crate::matrix::{Int8Rows, Matrix};
use crate::safetensors::{dtype, SafeTensors, TensorInfo};
use crate::tokenize::TOKENIZER_NAME;

/// Name of the `[vocab, dim]` tensor of token vectors.
pub const EMBEDDINGS_TENSOR: &str = "embeddings";
/// Name of the `[vocab]` per-row dequantisation scales (int8 models only).
pub const SCALES_TENSOR: &str = "scales";
/// Name of the optional `[vocab]` per-token pooling weights.
pub const WEIGHTS_TENSOR: &str = "weights";
/// Metadata key holding the vocabulary, one token per line in row order.
pub const VOCAB_KEY: &str = "vocab";
/// Metadata key naming the tokenizer the vocabulary was built with.
pub const TOKENIZER_KEY: &str = "tokenizer";
/// Metadata key with the model's human-readable name.
pub const NAME_KEY: &str = "name";
/// File read for the vocabulary when the metadata has none: `vocab.txt` in
/// the model file's directory.
pub const SIBLING_VOCAB_FILE: &str = "vocab.txt";

/// A loaded static embedding model.
///
/// `f32` and `f16` files are held as `f32`; int8 files stay int8 with a
/// scale per row (a quarter of the memory, so the rows a build reads at
/// random stay in cache), and pooling gives the bits the widened rows
/// would (see `matrix.rs`).
#[derive(Debug, Clone)]
pub struct StaticModel {
    pub(crate) index: FxHashMap<Box<str>, u32>,
    pub(crate) tokens: Vec<Box<str>>,
    pub(crate) dim: usize,
    pub(crate) vectors: Matrix,
    pub(crate) weights: Vec<f32>,
    name: String,
    file: String,
    fingerprint: String,
}

impl StaticModel {
    /// Loads a model file. If its metadata has no `vocab`, the vocabulary is
    /// read from `vocab.txt` in the same directory.
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| ModelError::Io {
            file: file.clone(),
            detail: e.to_string(),
        })?;
        let sibling = || -> Result<String, ModelError> {
            let vocab_path = path
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .join(SIBLING_VOCAB_FILE);
            std::fs::read_to_string(&vocab_path).map_err(|e| ModelError::Vocab {
                file: file.clone(),
                detail: format!(
                    "no `{VOCAB_KEY}` metadata and {} cannot be read: {e}",
                    vocab_path.display()
                ),
            })
        };
        Self::parse(&bytes, &file, sibling, |q| Cow::Owned(q.to_vec()), None)
    }

    /// Loads a model from bytes whose metadata carries the vocabulary;
    /// `file` names the source in errors.
    pub fn from_bytes(bytes: &[u8], file: &str) -> Result<Self, ModelError> {
        let keep = |q: &[u8]| Cow::Owned(q.to_vec());
        Self::parse(bytes, file, no_sibling_vocab(file), keep, None)
    }

    /// [`Self::from_bytes`] for bytes that live as long as the program (the
    /// built-in model's, compiled in): an int8 model's rows are borrowed
    /// from them instead of copied. Same checks, same errors, same vectors.
    pub fn from_static_bytes(bytes: &'static [u8], file: &str) -> Result<Self, ModelError> {
        Self::parse(bytes, file, no_sibling_vocab(file), Cow::Borrowed, None)
    }

    /// [`Self::from_static_bytes`] with the fingerprint already known (the
    /// built-in model's, written down in `builtin.rs` and tested there),
    /// so loading does not hash the bytes: SHA-256 of the 3.6 MB model is
    /// about 200 M instructions, most of what loading costs.
    pub(crate) fn from_static_bytes_with_fingerprint(
        bytes: &'static [u8],
        file: &str,
        fingerprint: &str,
    ) -> Result<Self, ModelError> {
        let sibling = no_sibling_vocab(file);
        Self::parse(bytes, file, sibling, Cow::Borrowed, Some(fingerprint))
    }

    /// `keep` turns the int8 rows' bytes (a slice of `bytes`) into what
    /// the model holds: a copy, or the slice itself when it is `'static`.
    /// `known_fingerprint` is used instead of hashing when given.
    fn parse<'b>(
        bytes: &'b [u8],
        file: &str,
        sibling_vocab: impl FnOnce() -> Result<String, ModelError>,
        keep: impl FnOnce(&'b [u8]) -> Cow<'static, [u8]>,
        known_fingerprint: Option<&str>,
    ) -> Result<Self, ModelError> {
        let st = SafeTensors::parse(bytes, file)?;
        let tokenizer = st.metadata(TOKENIZER_KEY).ok_or_else(|| ModelError::Metadata {
            file: file.to_string(),
            key: TOKENIZER_KEY.to_string(),
            detail: format!(
                "missing; set it to `{TOKENIZER_NAME}` if the vocabulary was built with this crate's tokenizer"
            ),
        })?;
        if tokenizer != TOKENIZER_NAME {
            return Err(ModelError::Metadata {
                file: file.to_string(),
                key: TOKENIZER_KEY.to_string(),
                detail: format!(
                    "`{tokenizer}` is not supported (this build tokenizes with `{TOKENIZER_NAME}`); train or convert the model with `{TOKENIZER_NAME}`"
                ),
            });
        }

        let emb = st
            .tensor(EMBEDDINGS_TENSOR)
            .ok_or_else(|| ModelError::MissingTensor {
                file: file.to_string(),
                tensor: EMBEDDINGS_TENSOR.to_string(),
            })?;
        let (rows, dim) = match emb.shape[..] {
            [rows, dim] if rows > 0 && dim > 0 => (rows as usize, dim as usize),
            _ => {
                return Err(bad_shape(
                    file,
                    EMBEDDINGS_TENSOR,
                    emb,
                    "expected [vocab, dim] with both non-zero",
                ))
            }
        };
        let vectors = read_embeddings(&st, emb, rows, dim, file, keep)?;
        let weights = match st.tensor(WEIGHTS_TENSOR) {
            Some(w) => {
                let weights = read_row_f32(&st, w, WEIGHTS_TENSOR, rows, file)?;
                if let Some(row) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
                    return Err(bad_value(
                        file,
                        WEIGHTS_TENSOR,
                        row,
                        "weights must be finite and non-negative",
                    ));
                }
                weights
            }
            None => vec![1.0; rows],
        };

        let vocab_text = match st.metadata(VOCAB_KEY) {
            Some(v) => v.to_string(),
            None => sibling_vocab()?,
        };
        let (tokens, index) = parse_vocab(&vocab_text, rows, file)?;

        let fingerprint = match known_fingerprint {
            Some(known) => known.to_string(),
            None => {
                let mut hasher = Sha256::new();
                hasher.update(bytes);
                if st.metadata(VOCAB_KEY).is_none() {
                    hasher.update(vocab_text.as_bytes());
                }
                let digest = hasher.finalize();
                digest[..16].iter().map(|b| format!("{b:02x}")).collect()
            }
        };

        Ok(Self {
            index,
            tokens,
            dim,
            vectors,
            weights,
            name: st.metadata(NAME_KEY).unwrap_or("unnamed").to_string(),
            file: file.to_string(),
            fingerprint,
        })
    }

    /// The vector length.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of tokens with a vector.
    pub fn vocab_len(&self) -> usize {
        self.tokens.len()
    }

    /// The model's name from its metadata (`unnamed` when it has none).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the model came from (its path, or the built-in label).
    pub fn file(&self) -> &str {
        &self.file
    }

    /// A hex digest of the model's bytes (and vocabulary file), for storing
    /// beside vectors computed with it: two models with equal fingerprints
    /// produce the same vectors.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The row of `token` (already normalised by the tokenizer), if known.
    pub fn token_id(&self, token: &str) -> Option<usize> {
        self.index.get(token).map(|&i| i as usize)
    }

    /// The token of row `id`.
    pub fn token(&self, id: usize) -> Option<&str> {
        self.tokens.get(id).map(|t| &**t)
    }

    /// The vector of row `id`.
    ///
    /// An int8 model widens its whole matrix to `f32` on the first call
    /// (and keeps it): this is for inspecting a model; encoding does not
    /// need it.
    pub fn row(&self, id: usize) -> Option<&[f32]> {
        self.vectors.row(id, self.dim)
    }

    /// The pooling weight of row `id`.
    pub fn weight(&self, id: usize) -> Option<f32> {
        self.weights.get(id).copied()
    }

    /// Checks that vectors of `expected_dim` dimensions (say, read from an
    /// index) can be compared with this model's.
    pub fn check_dim(&self, expected_dim: usize) -> Result<(), ModelError> {
        if expected_dim != self.dim {
            return Err(ModelError::DimMismatch {
                file: self.file.clone(),
                model_dim: self.dim,
                expected_dim,
            });
        }
        Ok(())
    }

    /// Checks that stored vectors were made by this very model: same
    /// dimension and same fingerprint.
    pub fn check_compatible(
        &self,
        expected_dim: usize,
        expected_fingerprint: &str,
    ) -> Result<(), ModelError> {
        self.check_dim(expected_dim)?;
        if expected_fingerprint != self.fingerprint {
            return Err(ModelError::ModelMismatch {
                file: self.file.clone(),
                model_fingerprint: self.fingerprint.clone(),
                expected_fingerprint: expected_fingerprint.to_string(),
            });
        }
        Ok(())
    }
}

fn bad_shape(file: &str, tensor: &str, info: &TensorInfo, detail: &str) -> ModelError {
    ModelError::BadShape {
        file: file.to_string(),
        tensor: tensor.to_string(),
        shape: info.shape.clone(),
        detail: detail.to_string(),
    }
}

fn bad_value(file: &str, tensor: &str, row: usize, detail: &str) -> ModelError {
    ModelError::BadValue {
        file: file.to_string(),
        tensor: tensor.to_string(),
        row,
        detail: detail.to_string(),
    }
}

fn wrong_dtype(file: &str, tensor: &str, info: &TensorInfo, expected: &str) -> ModelError {
    ModelError::WrongDtype {
        file: file.to_string(),
        tensor: tensor.to_string(),
        found: info.dtype.clone(),
        expected: expected.to_string(),
    }
}

/// Reads the embeddings: `f32` as they are, `f16` widened, int8 kept as
/// int8 with their `scales`; rejects non-finite scales and values.
fn read_embeddings<'b>(
    st: &SafeTensors<'b>,
    emb: &TensorInfo,
    rows: usize,
    dim: usize,
    file: &str,
    keep: impl FnOnce(&'b [u8]) -> Cow<'static, [u8]>,
) -> Result<Matrix, ModelError> {
    let bytes = st.bytes(emb);
    let scales = st.tensor(SCALES_TENSOR);
    let vectors: Vec<f32> = match emb.dtype.as_str() {
        dtype::FLOAT32 => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        dtype::FLOAT16 => bytes
            .chunks_exact(2)
            .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        "I8" => {
            let info = scales.ok_or_else(|| ModelError::MissingTensor {
                file: file.to_string(),
                tensor: SCALES_TENSOR.to_string(),
            })?;
            let scales = read_row_f32(st, info, SCALES_TENSOR, rows, file)?;
            if let Some(row) = scales.iter().position(|s| !s.is_finite()) {
                return Err(bad_value(file, SCALES_TENSOR, row, "scale is not finite"));
            }
            if let Some(row) = first_overflowing_row(bytes, &scales, dim) {
                return Err(bad_value(
                    file,
                    EMBEDDINGS_TENSOR,
                    row,
                    "value is NaN or infinite",
                ));
            }
            return Ok(Matrix::Int8(Int8Rows::new(keep(bytes), scales)));
        }
        _ => return Err(wrong_dtype(file, EMBEDDINGS_TENSOR, emb, "f32, f16 or I8")),
    };
    if let Some(info) = scales {
        return Err(bad_shape(
            file,
            SCALES_TENSOR,
            info,
            "`scales` only goes with I8 embeddings; drop it or store the embeddings as I8",
        ));
    }
    if let Some(i) = vectors.iter().position(|v| !v.is_finite()) {
        return Err(bad_value(
            file,
            EMBEDDINGS_TENSOR,
            i / dim,
            "value is NaN or infinite",
        ));
    }
    Ok(Matrix::Float(vectors))
}

/// The first row of int8 values `q` whose value `f32::from(q) * scale`
/// overflows to infinity (with finite scales, nothing else is non-finite).
/// `|q| <= 128`, so a row whose `|scale|` is at most `f32::MAX / 128`
/// (exact: a power of two) cannot overflow; only the others, none in a
/// sane model, are read, so loading does not touch the matrix.
fn first_overflowing_row(q: &[u8], scales: &[f32], dim: usize) -> Option<usize> {
    const SAFE: f32 = f32::MAX / 128.0;
    scales
        .iter()
        .zip(q.chunks_exact(dim))
        .position(|(&scale, row)| {
            scale.abs() > SAFE
                && row
                    .iter()
                    .any(|&q| !(f32::from(q as i8) * scale).is_finite())
        })
}

/// Reads a `[rows]` f32 tensor.
fn read_row_f32(
    st: &SafeTensors<'_>,
    info: &TensorInfo,
    name: &str,
    rows: usize,
    file: &str,
) -> Result<Vec<f32>, ModelError> {
    if info.dtype != dtype::FLOAT32 {
        return Err(wrong_dtype(file, name, info, dtype::FLOAT32));
    }
    if info.shape[..] != [rows as u64] {
        return Err(bad_shape(
            file,
            name,
            info,
            &format!("expected [{rows}], one value per embedding row"),
        ));
    }
    Ok(st
        .bytes(info)
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// The vocabulary reader [`StaticModel::from_bytes`] uses: there is no
/// file beside the bytes, so the metadata must carry the vocabulary.
fn no_sibling_vocab(file: &str) -> impl FnOnce() -> Result<String, ModelError> + '_ {
    move || {
        Err(ModelError::Vocab {
            file: file.to_string(),
            detail: format!("no `{VOCAB_KEY}` metadata in the file"),
        })
    }
}

/// Splits the vocabulary text into tokens and checks it against the rows.
type Vocab = (Vec<Box<str>>, FxHashMap<Box<str>, u32>);

fn parse_vocab(text: &str, rows: usize, file: &str) -> Result<Vocab, ModelError> {
    let vocab_err = |detail: String| ModelError::Vocab {
        file: file.to_string(),
        detail,
    };
    let tokens: Vec<Box<str>> = text
        .strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .map(|t| Box::from(t.strip_suffix('\r').unwrap_or(t)))
        .collect();
    if tokens.len() != rows {
        return Err(vocab_err(format!(
            "{} tokens for {rows} embedding rows",
            tokens.len()
        )));
    }
    if rows > u32::MAX as usize {
        return Err(vocab_err(format!(
            "{rows} rows exceed the supported maximum"
        )));
    }
    let mut index = FxHashMap::default();
    index.reserve(rows);
    for (row, token) in tokens.iter().enumerate() {
        if token.is_empty() || token.chars().any(char::is_whitespace) {
            return Err(vocab_err(format!(
                "token at row {row} is empty or holds whitespace"
            )));
        }
        if let Some(first) = index.insert(token.clone(), row as u32) {
            return Err(vocab_err(format!(
                "token `{token}` appears at rows {first} and {row}"
            )));
        }
    }
    Ok((tokens, index))
}

/// IEEE 754 half to single precision, including subnormals, infinities and
/// NaN (which the caller then rejects).
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = frac * 2^-24.
            let v = frac as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000,
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// Single to half precision, rounding to nearest even (for the writer).
pub(crate) fn f32_to_f16(v: f32) -> u16 {
    let bits = v.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if frac != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = frac | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rounded = (m + half - 1 + ((m >> shift) & 1)) >> shift;
        return sign | rounded as u16;
    }
    let rounded = frac + 0xfff + ((frac >> 13) & 1);
    if rounded & 0x80_0000 != 0 {
        let e = e + 1;
        if e >= 0x1f {
            return sign | 0x7c00;
        }
        return sign | ((e as u16) << 10);
    }
    sign | ((e as u16) << 10) | (rounded >> 13) as u16
}
