//! Offline semantic similarity for code search: a static (token-to-vector)
//! embedding model, read from a local safetensors file, that turns a query or
//! a chunk of code into a unit vector in microseconds.
//!
//! # Why a static model
//!
//! Lexical ranking misses a goal that names a concept in other words than
//! the code does ("token budget" against `max_tokens`, "retry" against
//! `backoff`). A transformer would bridge that but costs milliseconds per
//! chunk and a network download. A static model is a table with one small
//! vector per word part; a text's vector is the weighted mean of its parts'
//! vectors. It runs at lexical-index speed, needs no network, and ships as a
//! file of a few megabytes.
//!
//! # Pieces
//!
//! - [`tokenize`]: the code-aware tokenizer (`camelCase`, `snake_case`,
//!   digits, lowercase, light plural stripping) shared by training and use.
//! - [`StaticModel`]: loading and strict validation of a model file
//!   ([`ModelError`] names the file and the fix for every defect).
//! - [`Embedding`], [`StaticModel::encode`]: pooling and cosine similarity.
//! - [`ModelSpec`]: writing a model file (the trainer's export, and the
//!   tests' tiny models).
//! - [`train`]: the co-occurrence / PPMI / truncated-SVD pipeline that built
//!   model v2 from source code, and the contrastive fine-tuning on
//!   (doc comment, documented code) pairs that turned v2 into the shipped
//!   v3 (`examples/train.rs` drives both).
//! - [`builtin()`]: the shipped model, the default.
#![warn(missing_docs)]

pub mod builtin;
mod encode;
mod error;
mod matrix;
mod model;
pub mod safetensors;
pub mod tokenize;
pub mod train;
mod writer;

pub use builtin::builtin;
pub use encode::{cosine, dot, Embedding};
pub use error::ModelError;
pub use model::{
    StaticModel, EMBEDDINGS_TENSOR, NAME_KEY, SCALES_TENSOR, SIBLING_VOCAB_FILE, TOKENIZER_KEY,
    VOCAB_KEY, WEIGHTS_TENSOR,
};
pub use writer::{InvalidModelSpec, ModelSpec, Storage};
