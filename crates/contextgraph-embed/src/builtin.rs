//! The shipped model, compiled into the library so the default needs no
//! file on disk and no network.
//!
//! It was trained by `examples/train.rs` from the permissively licensed
//! crate sources listed in the crate's `CORPUS.md`; the README has the
//! figures and the command.

use std::sync::OnceLock;

use crate::error::ModelError;
use crate::model::StaticModel;

/// The shipped model file's bytes.
pub const BUILTIN_MODEL_BYTES: &[u8] = include_bytes!("../model/code-static-v3.safetensors");

/// The label errors and [`StaticModel::file`] use for the shipped model.
pub const BUILTIN_MODEL_LABEL: &str =
    "built-in model (contextgraph-embed/model/code-static-v3.safetensors)";

/// [`StaticModel::fingerprint`] of the shipped model (the first 16 bytes of
/// the SHA-256 of [`BUILTIN_MODEL_BYTES`], in hex), written down so that
/// loading it does not hash 3.6 MB in every process: that hash was most of
/// a cold build's model load. `tests/test_builtin.rs` recomputes it, so a
/// retrained model with a stale value here fails the tests.
pub const BUILTIN_MODEL_FINGERPRINT: &str = "745dae321a49df68938dfca2045a6ed1";

/// The shipped model, parsed once per process on first use (a few
/// milliseconds; its int8 rows are borrowed from the compiled-in bytes,
/// and its fingerprint is [`BUILTIN_MODEL_FINGERPRINT`]). An error means
/// the crate was built from a damaged checkout; it is returned, not
/// panicked on, so a caller can fall back to lexical ranking.
pub fn builtin() -> Result<&'static StaticModel, ModelError> {
    static MODEL: OnceLock<Result<StaticModel, ModelError>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            StaticModel::from_static_bytes_with_fingerprint(
                BUILTIN_MODEL_BYTES,
                BUILTIN_MODEL_LABEL,
                BUILTIN_MODEL_FINGERPRINT,
            )
        })
        .as_ref()
        .map_err(Clone::clone)
}
