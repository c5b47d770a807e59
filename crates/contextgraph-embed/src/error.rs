//! Typed errors for loading and checking a model file.
//!
//! A model file comes from outside the program (a user-supplied path, or a
//! file an index was built with), so every way it can be wrong is a value,
//! not a panic. Each message names the file and says what to do about it,
//! because the person reading it is usually not the one who made the file.

use thiserror::Error;

/// Why a model file could not be used.
///
/// `file` is the file's path, or a label such as `built-in model` for the
/// shipped one, so a message always says which file is at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ModelError {
    /// The file could not be read at all.
    #[error("cannot read model file {file}: {detail}; check the path and its permissions")]
    Io {
        /// The file.
        file: String,
        /// The operating system's reason.
        detail: String,
    },

    /// The file is shorter than its own header says it is, or than the
    /// 8-byte length prefix every safetensors file starts with.
    #[error("model file {file} is truncated: {detail}; the download or copy was cut short, copy the file again")]
    Truncated {
        /// The file.
        file: String,
        /// Which part is missing.
        detail: String,
    },

    /// The JSON header is not valid, or does not describe tensors the way
    /// the safetensors format requires.
    #[error("model file {file} has a malformed safetensors header: {detail}; it is not a safetensors file, or it was damaged")]
    MalformedHeader {
        /// The file.
        file: String,
        /// What is wrong with the header.
        detail: String,
    },

    /// A tensor the format requires is not in the file.
    #[error("model file {file} has no `{tensor}` tensor; a static embedding model needs `embeddings` [vocab, dim] (and `scales` [vocab] when the embeddings are int8); re-export the model in the layout the contextgraph-embed README describes")]
    MissingTensor {
        /// The file.
        file: String,
        /// The tensor's name.
        tensor: String,
    },

    /// A tensor is stored in a type this loader does not read for it.
    #[error("model file {file}: tensor `{tensor}` has dtype {found}, expected {expected}; re-export the model with a supported dtype")]
    WrongDtype {
        /// The file.
        file: String,
        /// The tensor's name.
        tensor: String,
        /// The dtype in the file.
        found: String,
        /// The dtypes accepted for this tensor.
        expected: String,
    },

    /// A tensor's shape does not fit the model layout (wrong rank, zero
    /// size, or a length that disagrees with the embeddings).
    #[error("model file {file}: tensor `{tensor}` has shape {shape:?}: {detail}; re-export the model in the layout the contextgraph-embed README describes")]
    BadShape {
        /// The file.
        file: String,
        /// The tensor's name.
        tensor: String,
        /// The shape in the file.
        shape: Vec<u64>,
        /// What it should be.
        detail: String,
    },

    /// The vocabulary is missing, or its length is not the number of
    /// embedding rows, or it holds an empty or repeated token.
    #[error("model file {file}: vocabulary problem: {detail}; the vocabulary (metadata key `vocab`, or a `vocab.txt` beside the file) must list one token per embedding row, in row order")]
    Vocab {
        /// The file.
        file: String,
        /// What is wrong.
        detail: String,
    },

    /// A metadata entry the loader needs is missing or has a value it
    /// cannot use (an unknown tokenizer, for instance).
    #[error("model file {file}: metadata `{key}`: {detail}")]
    Metadata {
        /// The file.
        file: String,
        /// The metadata key.
        key: String,
        /// What is wrong and what to do.
        detail: String,
    },

    /// A vector, scale or weight is NaN or infinite (or a weight is
    /// negative), which would poison every similarity it touches.
    #[error("model file {file}: tensor `{tensor}` holds an invalid value at row {row}: {detail}; the model was exported from a diverged or damaged training run, retrain or re-export it")]
    BadValue {
        /// The file.
        file: String,
        /// The tensor's name.
        tensor: String,
        /// The first bad row.
        row: usize,
        /// What is wrong with the value.
        detail: String,
    },

    /// The model's dimension is not the one stored vectors were computed
    /// with, so its vectors cannot be compared with them.
    #[error("model file {file} has dimension {model_dim}, but the index stores {expected_dim}-dimensional vectors; rebuild the index with this model, or use the model the index was built with")]
    DimMismatch {
        /// The file.
        file: String,
        /// The model's dimension.
        model_dim: usize,
        /// The dimension the caller holds vectors of.
        expected_dim: usize,
    },

    /// The model is not the one stored vectors were computed with (same
    /// dimension, different vectors), so similarities would be meaningless.
    #[error("model file {file} has fingerprint {model_fingerprint}, but the index was built with model {expected_fingerprint}; rebuild the index with this model, or use the model the index was built with")]
    ModelMismatch {
        /// The file.
        file: String,
        /// This model's fingerprint.
        model_fingerprint: String,
        /// The fingerprint the caller's vectors were made with.
        expected_fingerprint: String,
    },
}
