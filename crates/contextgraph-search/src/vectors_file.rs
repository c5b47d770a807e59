//! The chunk vectors of the semantic signal on disk, beside the persisted
//! index, so a process that opens a workspace scores goals at once instead
//! of embedding every chunk again.
//!
//! Two files, mirroring the index's snapshot and journal:
//!
//! - `vectors.bin` ([`VECTORS_FILE`]) holds one row per slot of one index
//!   snapshot, in slot order, and names that snapshot by its id (the
//!   SHA-256 of its section directory, see `index/frozen.rs`). A process
//!   that loads that snapshot maps the file and scores from it in place:
//!   row `s` is slot `s`'s vector, so lining the vectors up with the index
//!   costs nothing per chunk (version 1 keyed rows by content digest only,
//!   and every process paid about 3 µs per chunk to find each slot's row:
//!   1.1 s on a 345,071-chunk index).
//! - `vectors-tail.bin` ([`TAIL_FILE`]) holds the vectors of chunks indexed
//!   since that snapshot (the journal's), keyed by content digest: a loading
//!   process finds the few slots the journal added there.
//!
//! A vector is only ever used for the content it was computed from: the
//! aligned rows only for the snapshot they name (and its slots are
//! immutable: an edit appends new slots), the tail's by content digest.
//! The aligned file also records each row's content digest, so vectors of
//! another snapshot (written by a process with the signal off, or before a
//! compaction) are carried over by content instead of recomputed.
//!
//! What is checked on load, each failure a typed [`VectorsFileError`] (the
//! caller rebuilds the vectors from the index and rewrites the files): the
//! magic and format version, the vector length and model fingerprint
//! against the model in use, every length against the file size, every
//! row's scale, and a CRC-32 of the whole content (at memory speed; a
//! SHA-256 of a 56 MB file would cost a tenth of a second on every open),
//! so a torn or bit-flipped file is never served.
//!
//! Layout of both, little-endian:
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic: `CGPVECS\n` (aligned) or `CGPVTAL\n` (tail) |
//! | 4 | format version ([`VERSION`]) |
//! | 4 | vector length `dim` |
//! | 4 + n | model fingerprint: its length `n` (≤ 256), then UTF-8 |
//! | 32 | aligned: the snapshot id; tail: zeros |
//! | 4 | number of rows `r` |
//! | … | aligned: `r × dim` int8 components, then `r` `f32` scales (0: the slot has no vector), then `r` content digests; tail: per row its digest, `f32` scale and `dim` int8 components |
//! | 4 | CRC-32 of everything before it |
//!
//! Vectors are int8 with a per-row scale (`value = q × scale`), as the
//! model itself is: a quarter of the `f32` size, and scored by an integer
//! dot product (see `semantic_rows.rs`). The components of all rows lie
//! together so the scoring pass reads one contiguous block.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use contextgraph_embed::StaticModel;

use crate::index::Backing;

/// The aligned file's name inside the index's cache directory.
pub const VECTORS_FILE: &str = "vectors.bin";
/// The tail file's name inside the index's cache directory.
pub const TAIL_FILE: &str = "vectors-tail.bin";
/// The first eight bytes of every aligned vectors file.
pub const MAGIC: &[u8; 8] = b"CGPVECS\n";
/// The first eight bytes of every tail vectors file.
pub const TAIL_MAGIC: &[u8; 8] = b"CGPVTAL\n";
/// The format version this build reads and writes. Version 2: rows
/// aligned with a snapshot's slots (version 1 was keyed by digest only,
/// with `f32` scales interleaved); a version 1 file is rejected and
/// rebuilt.
pub const VERSION: u32 = 2;
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

/// Rounds `v` to int8 with a per-row scale (its largest magnitude maps to
/// 127), written into `out`; returns the scale. The scale is 0 (no vector)
/// for a zero or non-finite vector.
pub fn quantize(v: &[f32], out: &mut [u8]) -> f32 {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if !(max > 0.0 && max.is_finite()) {
        out.iter_mut().for_each(|q| *q = 0);
        return 0.0;
    }
    let scale = max / 127.0;
    for (q, x) in out.iter_mut().zip(v) {
        *q = (x / scale).round().clamp(-127.0, 127.0) as i8 as u8;
    }
    scale
}

/// Rows aligned with one snapshot's slots, read in place from a mapped
/// `vectors.bin`.
#[derive(Debug)]
pub struct AlignedRows {
    bytes: Arc<Backing>,
    snapshot: [u8; 32],
    dim: usize,
    rows: usize,
    /// Where the components, scales and digests start in `bytes`.
    components: usize,
    scales: usize,
    digests: usize,
}

impl AlignedRows {
    /// The id of the snapshot whose slots the rows are.
    pub fn snapshot_id(&self) -> [u8; 32] {
        self.snapshot
    }

    /// Number of rows (the snapshot's slots).
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Row `i`'s scale (0: no vector).
    pub fn scale(&self, i: usize) -> f32 {
        let at = self.scales + 4 * i;
        self.bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0.0, f32::from_le_bytes)
    }

    /// Row `i`'s int8 components (as bytes).
    pub fn components(&self, i: usize) -> &[u8] {
        let at = self.components + self.dim * i;
        self.bytes.get(at..at + self.dim).unwrap_or(&[])
    }

    /// The components and the scales (`f32` LE bytes) of rows `range`
    /// (empty past the end).
    pub(crate) fn block(&self, range: std::ops::Range<usize>) -> (&[u8], &[u8]) {
        let components = self
            .bytes
            .get(self.components + range.start * self.dim..self.components + range.end * self.dim)
            .unwrap_or(&[]);
        let scales = self
            .bytes
            .get(self.scales + range.start * 4..self.scales + range.end * 4)
            .unwrap_or(&[]);
        (components, scales)
    }

    /// Row `i`'s content digest.
    pub fn digest(&self, i: usize) -> Option<&[u8; 32]> {
        let at = self.digests + 32 * i;
        self.bytes.get(at..at + 32)?.try_into().ok()
    }
}

/// Rows keyed by content digest, read from `vectors-tail.bin`.
#[derive(Debug, Default)]
pub struct KeyedRows {
    /// Per row: its digest and scale.
    pub(crate) heads: Vec<([u8; 32], f32)>,
    /// `dim` int8 components per row (as bytes).
    pub(crate) components: Vec<u8>,
}

impl KeyedRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }
}

fn header(
    magic: &[u8; 8],
    dim: usize,
    fingerprint: &str,
    snapshot: &[u8; 32],
    rows: usize,
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(magic);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    out.extend_from_slice(&(fingerprint.len() as u32).to_le_bytes());
    out.extend_from_slice(fingerprint.as_bytes());
    out.extend_from_slice(snapshot);
    out.extend_from_slice(&(rows as u32).to_le_bytes());
    out
}

/// A vectors file being written: a temporary file (renamed over the real
/// one by [`finish`](Self::finish)) and the running CRC-32, so the rows are
/// streamed out instead of held in a second copy (97 MB on a 594k-chunk
/// index).
struct Out {
    path: PathBuf,
    tmp: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
    crc: crc32fast::Hasher,
}

impl Out {
    fn create(path: &Path, head: &[u8]) -> std::io::Result<Out> {
        // Unpredictable, exclusive, private (N6).
        let (file, tmp) = crate::store::create_temp(path)?;
        let mut out = Out {
            path: path.to_path_buf(),
            file: std::io::BufWriter::with_capacity(1 << 20, file),
            tmp,
            crc: crc32fast::Hasher::new(),
        };
        out.put(head)?;
        Ok(out)
    }

    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.crc.update(bytes);
        std::io::Write::write_all(&mut self.file, bytes)
    }

    /// Appends the checksum, syncs, and renames the file into place: a
    /// reader sees the old file or the new one, never half of one.
    fn finish(mut self) -> std::io::Result<()> {
        let crc = self.crc.clone().finalize();
        std::io::Write::write_all(&mut self.file, &crc.to_le_bytes())?;
        let file = self.file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path)
    }
}

/// Runs a write, reporting a failure against `path`.
fn writing(
    path: &Path,
    write: impl FnOnce() -> std::io::Result<()>,
) -> Result<(), VectorsFileError> {
    write().map_err(|source| VectorsFileError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// One row to write: its scale (0: no vector), components and digest.
pub type RowRef<'a> = (f32, &'a [u8], &'a [u8; 32]);

/// Writes `rows` (one per slot of the snapshot `snapshot`, in slot order)
/// to `path` atomically (a temporary file renamed over it), so a reader
/// sees the old file or the new one, never half of one, and a process
/// that mapped the old one keeps reading it.
pub fn write_aligned<'a>(
    path: &Path,
    model_dim: usize,
    fingerprint: &str,
    snapshot: &[u8; 32],
    rows: &[RowRef<'a>],
) -> Result<(), VectorsFileError> {
    writing(path, || {
        let mut out = Out::create(
            path,
            &header(MAGIC, model_dim, fingerprint, snapshot, rows.len()),
        )?;
        let zeros = vec![0u8; model_dim];
        for (_, q, _) in rows {
            out.put(if q.len() == model_dim { q } else { &zeros })?;
        }
        for (scale, q, _) in rows {
            let scale = if q.len() == model_dim { *scale } else { 0.0 };
            out.put(&scale.to_le_bytes())?;
        }
        for (_, _, digest) in rows {
            out.put(*digest)?;
        }
        out.finish()
    })
}

/// Writes digest-keyed `rows` (the chunks indexed since the snapshot) to
/// `path` atomically. Rows without a vector or of another length are left
/// out.
pub fn write_tail<'a>(
    path: &Path,
    model_dim: usize,
    fingerprint: &str,
    rows: &[RowRef<'a>],
) -> Result<(), VectorsFileError> {
    let kept: Vec<&RowRef<'a>> = rows
        .iter()
        .filter(|(scale, q, _)| *scale > 0.0 && q.len() == model_dim)
        .collect();
    writing(path, || {
        let head = header(TAIL_MAGIC, model_dim, fingerprint, &[0; 32], kept.len());
        let mut out = Out::create(path, &head)?;
        for (scale, q, digest) in kept {
            out.put(*digest)?;
            out.put(&scale.to_le_bytes())?;
            out.put(q)?;
        }
        out.finish()
    })
}

/// The file at `path`, or `None` when there is none.
fn open(path: &Path) -> Result<Option<Backing>, VectorsFileError> {
    let io = |source| VectorsFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io(source)),
    };
    crate::store::map(&file).map(Some).map_err(io)
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

/// What the header says: the snapshot id, the row count, and where the
/// rows start; the checksum, magic, version and model checked.
fn parse_header(
    bytes: &[u8],
    path: &Path,
    magic: &[u8; 8],
    model: &StaticModel,
) -> Result<([u8; 32], usize, usize), VectorsFileError> {
    let malformed = |detail: String| VectorsFileError::Malformed {
        path: path.to_path_buf(),
        detail,
    };
    if bytes.len() < magic.len() || &bytes[..magic.len()] != magic {
        return Err(VectorsFileError::Format {
            path: path.to_path_buf(),
            detail: "not a vectors file of this kind (wrong magic)".into(),
        });
    }
    if bytes.len() < magic.len() + 8 {
        return Err(malformed("shorter than its header and checksum".into()));
    }
    let mut r = Reader {
        bytes,
        at: magic.len(),
        path,
    };
    // The version before the checksum: a file of another format is
    // reported as such, not as corrupt.
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(VectorsFileError::Format {
            path: path.to_path_buf(),
            detail: format!("format version {version}, this build reads {VERSION}"),
        });
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    if checksum(body).to_le_bytes() != crc {
        return Err(VectorsFileError::Checksum {
            path: path.to_path_buf(),
        });
    }
    r.bytes = body;
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
    let mut snapshot = [0u8; 32];
    snapshot.copy_from_slice(r.take(32, "snapshot id")?);
    let rows = r.u32("row count")? as usize;
    let row_len = dim + 4 + 32;
    let rest = body.len() - r.at;
    if rows.checked_mul(row_len) != Some(rest) {
        return Err(malformed(format!(
            "{rows} rows of {row_len} bytes in {rest} bytes"
        )));
    }
    Ok((snapshot, rows, r.at))
}

/// CRC-32 of `bytes`; a large file's halves on two threads, combined
/// (the check is most of what opening a 97 MB vectors file costs).
fn checksum(bytes: &[u8]) -> u32 {
    const SPLIT_ABOVE: usize = 8 << 20;
    let hash = |b: &[u8]| {
        let mut h = crc32fast::Hasher::new();
        h.update(b);
        h
    };
    if bytes.len() <= SPLIT_ABOVE {
        return hash(bytes).finalize();
    }
    let (first, second) = bytes.split_at(bytes.len() / 2);
    std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            .name("cgp-vectors-checksum".into())
            .spawn_scoped(scope, || hash(second));
        let mut h = hash(first);
        let tail = match other {
            Ok(t) => t.join().unwrap_or_else(|_| hash(second)),
            Err(_) => hash(second),
        };
        h.combine(&tail);
        h.finalize()
    })
}

fn check_scale(path: &Path, scale: f32) -> Result<(), VectorsFileError> {
    if scale.is_finite() && scale >= 0.0 {
        Ok(())
    } else {
        Err(VectorsFileError::Malformed {
            path: path.to_path_buf(),
            detail: format!("row scale {scale}"),
        })
    }
}

/// Reads the aligned vectors at `path` for `model`, mapped and read in
/// place. `Ok(None)` when there is no file; an error when there is one
/// that must not be used.
pub fn read_aligned(
    path: &Path,
    model: &StaticModel,
) -> Result<Option<AlignedRows>, VectorsFileError> {
    let Some(bytes) = open(path)? else {
        return Ok(None);
    };
    aligned_from(bytes, path, model).map(Some)
}

/// [`read_aligned`] of bytes already in hand (an index artifact's member,
/// see [`crate::artifact`]); `label` names them in errors.
pub(crate) fn aligned_from(
    bytes: Backing,
    label: &Path,
    model: &StaticModel,
) -> Result<AlignedRows, VectorsFileError> {
    let path = label;
    let (snapshot, rows, start) = parse_header(&bytes, path, MAGIC, model)?;
    let dim = model.dim();
    let aligned = AlignedRows {
        snapshot,
        dim,
        rows,
        components: start,
        scales: start + rows * dim,
        digests: start + rows * (dim + 4),
        bytes: Arc::new(bytes),
    };
    // One pass over the scales (4 bytes a row): a negative or non-finite
    // one would turn into nonsense scores.
    for i in 0..rows {
        check_scale(path, aligned.scale(i))?;
    }
    Ok(aligned)
}

/// [`read_aligned`]: the vectors file proper (its tail is read with
/// [`read_tail`]).
pub fn read(path: &Path, model: &StaticModel) -> Result<Option<AlignedRows>, VectorsFileError> {
    read_aligned(path, model)
}

/// Reads the digest-keyed vectors at `path` for `model`. `Ok(None)` when
/// there is no file; an error when there is one that must not be used.
pub fn read_tail(path: &Path, model: &StaticModel) -> Result<Option<KeyedRows>, VectorsFileError> {
    let Some(bytes) = open(path)? else {
        return Ok(None);
    };
    let (_, rows, start) = parse_header(&bytes, path, TAIL_MAGIC, model)?;
    let dim = model.dim();
    let mut keyed = KeyedRows {
        heads: Vec::with_capacity(rows),
        components: Vec::with_capacity(rows * dim),
    };
    let body = bytes.get(start..start + rows * (dim + 36)).unwrap_or(&[]);
    for row in body.chunks_exact(dim + 36) {
        let mut digest = [0u8; 32];
        digest.copy_from_slice(&row[..32]);
        let scale = f32::from_le_bytes([row[32], row[33], row[34], row[35]]);
        check_scale(path, scale)?;
        keyed.heads.push((digest, scale));
        keyed.components.extend_from_slice(&row[36..]);
    }
    Ok(Some(keyed))
}
