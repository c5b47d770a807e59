//! The chunk vectors of the semantic signal on disk: a sidecar file
//! (`vectors.bin`) next to the persisted index, so a process that opens a
//! workspace scores goals at once instead of embedding every chunk again.
//!
//! The file is separate from the index snapshot on purpose: the index's
//! format and load path evolve on their own, and vectors are only wanted
//! when the semantic signal is on. It needs no invalidation protocol with
//! the index either: each vector is keyed by the content digest of the chunk
//! it was computed from, so a vector can only ever be used for those exact
//! bytes. Vectors of content no longer indexed are dropped, and new content
//! embedded, by the next [`SemanticIndex::update`]; the file is then
//! rewritten.
//!
//! What is checked on load, each failure a typed [`VectorsFileError`] (the
//! caller rebuilds the vectors from the index and rewrites the file):
//! the magic and format version, the vector length and model fingerprint
//! against the model in use (vectors of another model are meaningless),
//! every length against the file size, and a SHA-256 of the whole content,
//! so a torn or bit-flipped file is never served.
//!
//! Layout, little-endian:
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `CGPVECS\n` |
//! | 4 | format version ([`VERSION`]) |
//! | 4 | vector length `dim` |
//! | 4 + n | model fingerprint: its length `n` (≤ 256), then UTF-8 |
//! | 4 | number of rows |
//! | rows × (32 + 4 + dim) | per row: the chunk's content digest, an `f32` scale, `dim` int8 components (`value = q × scale`) |
//! | 32 | SHA-256 of everything before it |
//!
//! Vectors are int8 with a per-row scale (a quarter of the `f32` size); the
//! freshly embedded vectors are rounded the same way in memory
//! ([`quantize_in_place`]), so a loaded index scores exactly as the one
//! that wrote it.

use std::path::{Path, PathBuf};

use contextgraph_embed::StaticModel;

use crate::index::sha256;
use crate::semantic::SemanticIndex;

/// The file's name inside the index's cache directory.
pub const VECTORS_FILE: &str = "vectors.bin";
/// The first eight bytes of every vectors file.
pub const MAGIC: &[u8; 8] = b"CGPVECS\n";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;
/// Longest model fingerprint accepted (the built-in model's is 64 hex digits).
const MAX_FINGERPRINT: usize = 256;
/// Longest vector accepted: static models have a few hundred dimensions.
const MAX_DIM: usize = 4096;

/// Why a vectors file was not used.
#[derive(Debug, thiserror::Error)]
pub enum VectorsFileError {
    /// The file could not be read or written.
    #[error("vectors file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a vectors file of this format (wrong magic or version).
    #[error("vectors file {path}: {detail}; it is rebuilt from the index")]
    Format {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// Lengths that disagree with each other or with the file size.
    #[error("vectors file {path} is malformed: {detail}; it is rebuilt from the index")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The content does not match its checksum (torn write, disk error).
    #[error("vectors file {path} fails its checksum; it is rebuilt from the index")]
    Checksum {
        /// The file.
        path: PathBuf,
    },
    /// Vectors of another model (other fingerprint or vector length).
    #[error("vectors file {path} holds vectors of another model ({detail}); it is rebuilt from the index")]
    OtherModel {
        /// The file.
        path: PathBuf,
        /// Which property differs.
        detail: String,
    },
}

/// Rounds `v` to what the file stores (int8 with a per-row scale), so
/// vectors computed now and vectors loaded later are identical.
pub fn quantize_in_place(v: &mut [f32]) {
    let scale = row_scale(v);
    for x in v.iter_mut() {
        *x = f32::from(quantize(*x, scale)) * scale;
    }
}

fn row_scale(v: &[f32]) -> f32 {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max > 0.0 && max.is_finite() {
        max / 127.0
    } else {
        1.0
    }
}

fn quantize(x: f32, scale: f32) -> i8 {
    (x / scale).round().clamp(-127.0, 127.0) as i8
}

/// Writes `vectors` to `path` atomically (a temporary file renamed over it),
/// so a reader sees the old file or the new one, never half of one.
pub fn write(path: &Path, vectors: &SemanticIndex) -> Result<(), VectorsFileError> {
    let io = |source| VectorsFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dim = vectors.dim();
    let fingerprint = vectors.fingerprint().as_bytes();
    let mut out = Vec::with_capacity(64 + vectors.len() * (36 + dim));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    out.extend_from_slice(&(fingerprint.len() as u32).to_le_bytes());
    out.extend_from_slice(fingerprint);
    out.extend_from_slice(&(vectors.len() as u32).to_le_bytes());
    for (digest, v) in vectors.rows() {
        let scale = row_scale(v);
        out.extend_from_slice(digest);
        out.extend_from_slice(&scale.to_le_bytes());
        out.extend(v.iter().map(|&x| quantize(x, scale) as u8));
    }
    let checksum = sha256(&out);
    out.extend_from_slice(&checksum);
    crate::store::atomic_write(path, &[&out]).map_err(io)
}

/// Reads the vectors at `path` for `model`. `Ok(None)` when there is no
/// file; an error when there is one that must not be used.
pub fn read(path: &Path, model: &StaticModel) -> Result<Option<SemanticIndex>, VectorsFileError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(VectorsFileError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    parse(&bytes, path, model).map(Some)
}

/// A cursor over the file's bytes that reports a short read as malformed.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], VectorsFileError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(VectorsFileError::Malformed {
                path: self.path.to_path_buf(),
                detail: format!("ends inside the {what}"),
            });
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u32, VectorsFileError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

fn parse(
    bytes: &[u8],
    path: &Path,
    model: &StaticModel,
) -> Result<SemanticIndex, VectorsFileError> {
    let malformed = |detail: String| VectorsFileError::Malformed {
        path: path.to_path_buf(),
        detail,
    };
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(VectorsFileError::Format {
            path: path.to_path_buf(),
            detail: "not a vectors file (wrong magic)".into(),
        });
    }
    if bytes.len() < MAGIC.len() + 32 {
        return Err(malformed("shorter than its header and checksum".into()));
    }
    let (body, checksum) = bytes.split_at(bytes.len() - 32);
    if sha256(body) != checksum {
        return Err(VectorsFileError::Checksum {
            path: path.to_path_buf(),
        });
    }
    let mut r = Reader {
        bytes: body,
        at: MAGIC.len(),
        path,
    };
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(VectorsFileError::Format {
            path: path.to_path_buf(),
            detail: format!("format version {version}, this build reads {VERSION}"),
        });
    }
    let dim = r.u32("vector length")? as usize;
    if dim == 0 || dim > MAX_DIM {
        return Err(malformed(format!("vector length {dim}")));
    }
    let fingerprint_len = r.u32("fingerprint length")? as usize;
    if fingerprint_len > MAX_FINGERPRINT {
        return Err(malformed(format!("fingerprint of {fingerprint_len} bytes")));
    }
    let fingerprint = std::str::from_utf8(r.take(fingerprint_len, "fingerprint")?)
        .map_err(|_| malformed("fingerprint is not UTF-8".into()))?;
    if dim != model.dim() {
        return Err(VectorsFileError::OtherModel {
            path: path.to_path_buf(),
            detail: format!("vector length {dim}, the model's is {}", model.dim()),
        });
    }
    if fingerprint != model.fingerprint() {
        return Err(VectorsFileError::OtherModel {
            path: path.to_path_buf(),
            detail: "model fingerprint differs".into(),
        });
    }
    let rows = r.u32("row count")? as usize;
    let row_len = 32 + 4 + dim;
    let rest = body.len() - r.at;
    if rows.checked_mul(row_len) != Some(rest) {
        return Err(malformed(format!(
            "{rows} rows of {row_len} bytes in {rest} bytes"
        )));
    }
    let mut digests = Vec::with_capacity(rows);
    let mut vectors = Vec::with_capacity(rows * dim);
    for _ in 0..rows {
        let row = r.take(row_len, "rows")?;
        let mut digest = [0u8; 32];
        digest.copy_from_slice(&row[..32]);
        let scale = f32::from_le_bytes([row[32], row[33], row[34], row[35]]);
        if !(scale.is_finite() && scale > 0.0) {
            return Err(malformed(format!("row scale {scale}")));
        }
        digests.push(digest);
        vectors.extend(row[36..].iter().map(|&q| f32::from(q as i8) * scale));
    }
    SemanticIndex::from_rows(model, digests, vectors)
        .map_err(|detail| malformed(detail.to_string()))
}
