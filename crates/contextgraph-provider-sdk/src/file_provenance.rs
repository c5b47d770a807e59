//! File provenance (F5): which bytes a `file://` URI plus an `L<a>-<b>`
//! range address, their digest, and the URI itself.
//!
//! # Which bytes a range addresses
//!
//! A file is split into lines at every `\n`. Line *n* (1-based) is the bytes
//! from the start of the line **through its terminating `\n` inclusive** (so a
//! CRLF line keeps its `\r\n`); the last line may lack a terminator and then
//! runs to the end of the file. A file ending in `\n` has no empty line after
//! it, and an empty file has no lines. A lone `\r` is an ordinary byte.
//!
//! The range `L<a>-<b>` addresses lines `a..=b` exactly as above, with no
//! normalization of any kind. Two consequences, both deliberate:
//! - concatenating adjacent ranges (`L1-3` then `L4-9`) reproduces the file
//!   byte for byte, so ranges compose;
//! - the digest is over bytes a verifier can find again with nothing but the
//!   file and the range string ([`read_range`]), which is what the
//!   conformance suite and `verify` implementations do.
//!
//! A range that reaches past the last line is an error, never a silently
//! shortened excerpt: a digest over fewer bytes than the range claims would be
//! a lie about where the content came from.

use std::path::Path;

use contextgraph_types::{LineRange, Provenance};

use crate::digest_memo;
use crate::frame_builder::FrameBuilder;
use contextgraph_types::FrameKind;

// The file URI mapping lives in `contextgraph-types` so crates that are not
// providers (the search library) share this one definition.
pub use contextgraph_types::file_uri::{file_uri_to_path, path_to_file_uri, FileUriError};

/// Why an excerpt or its provenance could not be produced.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProvenanceError {
    /// The path could not be written as a `file://` URI.
    #[error(transparent)]
    Uri(#[from] FileUriError),
    /// The range reaches past the last line of the file (F5: a digest must
    /// cover exactly the bytes the range names).
    #[error("range {range} reaches past the end of the file, which has {lines} line(s); clamp the range to the file")]
    RangePastEnd {
        /// The range asked for.
        range: LineRange,
        /// How many lines the file has.
        lines: usize,
    },
    /// The excerpt is not UTF-8, so it cannot be a frame's inline content
    /// byte for byte (frame content is a JSON string).
    #[error("the bytes of {range} are not valid UTF-8 (first bad byte at offset {valid_up_to}); serve the file as a reference or skip it")]
    NotUtf8 {
        /// The range.
        range: LineRange,
        /// Offset, within the excerpt, of the first invalid byte.
        valid_up_to: usize,
    },
}

/// The exact bytes of lines `range` of `file`, terminators included (see the
/// [module documentation](self) for the precise rule); `None` when the range
/// reaches past the last line.
///
/// This is the inverse of [`file_excerpt`]: hashing its result with
/// [`sha256_digest`](crate::sha256_digest) must reproduce the provenance `digest`.
pub fn read_range(file: &[u8], range: LineRange) -> Option<&[u8]> {
    // Newline to newline with `memchr` (a provider materialises hundreds of
    // excerpts per query, some deep in large files: a byte-by-byte split
    // was a tenth of a warm query's time).
    let (first, last) = (u64::from(range.start), u64::from(range.end));
    if first == 0 || last < first {
        return None;
    }
    // Offset just past the `n`th `\n` at or after `from`.
    let skip = |mut from: usize, n: u64| -> Option<usize> {
        for _ in 0..n {
            from += memchr::memchr(b'\n', file.get(from..)?)? + 1;
        }
        Some(from)
    };
    let start = skip(0, first - 1)?;
    // Line `last` must exist: it starts before the end of the file.
    let last_start = skip(start, last - first)?;
    if last_start >= file.len() {
        return None;
    }
    let end = memchr::memchr(b'\n', &file[last_start..]).map_or(file.len(), |i| last_start + i + 1);
    Some(&file[start..end])
}

/// How many lines `file` has under the [module's rule](self): the number of
/// `\n`, plus one if the last line is unterminated.
pub fn count_lines(file: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', file).count();
    newlines + usize::from(file.last().is_some_and(|&b| b != b'\n'))
}

/// A region of a file, its exact bytes, and the `file` provenance entry
/// describing them (F5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileExcerpt<'a> {
    /// Exactly the bytes the range addresses.
    pub bytes: &'a [u8],
    /// `{type: "file", uri, range, digest, method, by}`; the digest is over
    /// [`bytes`](Self::bytes).
    pub provenance: Provenance,
    /// The lines addressed.
    pub range: LineRange,
    /// A citation label, `<file name> L<a>-<b>`, for frames built from it.
    pub label: String,
}

impl<'a> FileExcerpt<'a> {
    /// The excerpt as text, when it is UTF-8.
    pub fn text(&self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes).ok()
    }

    /// A frame carrying this excerpt as its content, with the excerpt's URI,
    /// provenance and label already set. Fails when the excerpt is not UTF-8
    /// (inline content must be the exact bytes, and JSON strings are UTF-8).
    pub fn frame(
        &self,
        id: impl Into<String>,
        kind: FrameKind,
        title: impl Into<String>,
    ) -> Result<FrameBuilder, ProvenanceError> {
        let text = std::str::from_utf8(self.bytes).map_err(|e| ProvenanceError::NotUtf8 {
            range: self.range,
            valid_up_to: e.valid_up_to(),
        })?;
        let mut builder = FrameBuilder::new(id, kind, title, text)
            .citation_label(self.label.clone())
            .provenance(self.provenance.clone());
        if let Some(uri) = &self.provenance.uri {
            builder = builder.uri(uri.clone());
        }
        Ok(builder)
    }
}

/// The exact bytes of lines `range` of the file at `path` whose full
/// contents are `file`, with their F5 provenance: `uri` is `path` made
/// absolute as a `file://` URI, `range` is `L<a>-<b>`, `digest` is the
/// SHA-256 of exactly those bytes. Empty `method`/`by` are omitted.
///
/// Pass the bytes as read at retrieval time: the digest describes them, and
/// a verifier re-reads the file and compares (F5: no normalization).
pub fn file_excerpt<'a>(
    path: &Path,
    file: &'a [u8],
    range: LineRange,
    method: &str,
    by: &str,
) -> Result<FileExcerpt<'a>, ProvenanceError> {
    let uri = path_to_file_uri(path)?;
    let bytes = read_range(file, range).ok_or(ProvenanceError::RangePastEnd {
        range,
        lines: count_lines(file),
    })?;
    Ok(file_excerpt_of(path, uri, bytes, range, method, by))
}

/// [`file_excerpt`] of a region already read and a URI already made: `uri`
/// must be [`path_to_file_uri`]`(path)` and `bytes` must be
/// [`read_range`]`(file, range)`. For a caller excerpting many regions of
/// the same files (a search answer), which makes each file's URI and finds
/// its lines once rather than once per region.
pub fn file_excerpt_of<'a>(
    path: &Path,
    uri: String,
    bytes: &'a [u8],
    range: LineRange,
    method: &str,
    by: &str,
) -> FileExcerpt<'a> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| uri.clone());
    FileExcerpt {
        bytes,
        provenance: file_entry(uri, Some(range), bytes, method, by),
        range,
        label: format!("{name} {range}"),
    }
}

/// The F5 provenance of a whole file (no `range`: the whole resource).
pub fn whole_file_provenance(
    path: &Path,
    file: &[u8],
    method: &str,
    by: &str,
) -> Result<Provenance, FileUriError> {
    Ok(file_entry(path_to_file_uri(path)?, None, file, method, by))
}

fn file_entry(
    uri: String,
    range: Option<LineRange>,
    bytes: &[u8],
    method: &str,
    by: &str,
) -> Provenance {
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    Provenance {
        kind: Provenance::FILE.to_owned(),
        uri: Some(uri),
        range: range.map(|r| r.to_string()),
        digest: Some(digest_memo::digest(bytes)),
        method: non_empty(method),
        by: non_empty(by),
    }
}
