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

use std::path::{Path, PathBuf};

use contextgraph_types::{LineRange, Provenance};

use crate::digest::sha256_digest;
use crate::frame_builder::FrameBuilder;
use contextgraph_types::FrameKind;

/// Why a path cannot become a `file://` URI, or a URI a path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileUriError {
    /// The path could not be made absolute (it is empty, or the current
    /// directory is unreadable).
    #[error("cannot make {path:?} absolute for a file:// URI: {source}; pass an absolute path")]
    NotAbsolute {
        /// The path given.
        path: PathBuf,
        /// Why `std::path::absolute` failed.
        source: std::io::Error,
    },
    /// On a platform whose paths are not bytes, the path is not valid Unicode.
    #[error("path {0:?} is not valid Unicode and cannot be written as a file:// URI")]
    NotUnicode(PathBuf),
    /// The URI does not start with `file:`.
    #[error("{0:?} is not a file: URI")]
    NotFileScheme(String),
    /// The URI names a host other than `localhost`: the file is not on this machine.
    #[error("{uri:?} names host {host:?}; only local files (file:///… or file://localhost/…) can be read")]
    RemoteHost {
        /// The URI.
        uri: String,
        /// The host it names.
        host: String,
    },
    /// The URI carries a query (`?`) or fragment (`#`), which file URIs do not use.
    #[error("{0:?} has a query or fragment; percent-encode '?' and '#' in file paths")]
    QueryOrFragment(String),
    /// The URI path is not absolute.
    #[error("{0:?} has no absolute path after the authority")]
    RelativePath(String),
    /// A `%` is not followed by two hex digits, or the escapes decode to a
    /// NUL byte (or, off Unix, to invalid UTF-8).
    #[error("{uri:?} has an invalid percent escape at byte {offset}")]
    BadEscape {
        /// The URI.
        uri: String,
        /// Byte offset of the offending `%` (or of the undecodable run).
        offset: usize,
    },
}

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
/// [`sha256_digest`] must reproduce the provenance `digest`.
pub fn read_range(file: &[u8], range: LineRange) -> Option<&[u8]> {
    let mut offset = 0usize;
    let mut start = None;
    for (index, line) in file.split_inclusive(|&b| b == b'\n').enumerate() {
        let number = index as u64 + 1;
        if number == u64::from(range.start) {
            start = Some(offset);
        }
        offset += line.len();
        if number == u64::from(range.end) {
            return start.map(|s| &file[s..offset]);
        }
    }
    None
}

/// How many lines `file` has under the [module's rule](self): the number of
/// `\n`, plus one if the last line is unterminated.
pub fn count_lines(file: &[u8]) -> usize {
    file.split_inclusive(|&b| b == b'\n').count()
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
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| uri.clone());
    Ok(FileExcerpt {
        bytes,
        provenance: file_entry(uri, Some(range), bytes, method, by),
        range,
        label: format!("{name} {range}"),
    })
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
        digest: Some(sha256_digest(bytes)),
        method: non_empty(method),
        by: non_empty(by),
    }
}

/// Bytes kept verbatim in a file URI path: RFC 3986 unreserved characters,
/// the path separator, and the sub-delimiters and `:`/`@` a path segment may
/// carry. Everything else (space, `%`, `?`, `#`, non-ASCII, controls) is
/// percent-encoded, so the URI is unambiguous and decodes back to the path.
fn keep_verbatim(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'/'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
        )
}

fn percent_encode_path(bytes: &[u8], out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in bytes {
        if keep_verbatim(b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0x0f)]));
        }
    }
}

/// `path`, made absolute (against the current directory, without touching
/// the file system or resolving symlinks), as a `file:///…` URI with spaces
/// and other non-URI bytes percent-encoded.
///
/// `.` and `..` components are kept as `std::path::absolute` keeps them; pass
/// a canonical path (`std::fs::canonicalize`) when the same file must always
/// get the same URI, since hosts deduplicate on `uri` + `range`.
pub fn path_to_file_uri(path: &Path) -> Result<String, FileUriError> {
    let absolute = std::path::absolute(path).map_err(|source| FileUriError::NotAbsolute {
        path: path.to_path_buf(),
        source,
    })?;
    let mut uri = String::from("file://");
    encode_platform_path(&absolute, &mut uri)?;
    Ok(uri)
}

#[cfg(unix)]
fn encode_platform_path(path: &Path, out: &mut String) -> Result<(), FileUriError> {
    use std::os::unix::ffi::OsStrExt;
    percent_encode_path(path.as_os_str().as_bytes(), out);
    Ok(())
}

#[cfg(not(unix))]
fn encode_platform_path(path: &Path, out: &mut String) -> Result<(), FileUriError> {
    let text = path
        .to_str()
        .ok_or_else(|| FileUriError::NotUnicode(path.to_path_buf()))?;
    let text = text.replace('\\', "/");
    if !text.starts_with('/') {
        out.push('/');
    }
    percent_encode_path(text.as_bytes(), out);
    Ok(())
}

/// The local path a `file:` URI names: `file:///abs/path`,
/// `file://localhost/abs/path` or `file:/abs/path`, percent escapes decoded.
/// URIs naming another host, carrying a query or fragment, or with broken
/// escapes are errors (never a guess).
pub fn file_uri_to_path(uri: &str) -> Result<PathBuf, FileUriError> {
    let rest = uri
        .get(..5)
        .filter(|scheme| scheme.eq_ignore_ascii_case("file:"))
        .map(|_| &uri[5..])
        .ok_or_else(|| FileUriError::NotFileScheme(uri.to_owned()))?;
    if rest.contains(['?', '#']) {
        return Err(FileUriError::QueryOrFragment(uri.to_owned()));
    }
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let slash = after.find('/').unwrap_or(after.len());
            let host = &after[..slash];
            if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
                return Err(FileUriError::RemoteHost {
                    uri: uri.to_owned(),
                    host: host.to_owned(),
                });
            }
            &after[slash..]
        }
        None => rest,
    };
    if !path.starts_with('/') {
        return Err(FileUriError::RelativePath(uri.to_owned()));
    }
    let path_offset = uri.len() - path.len();
    let bytes = percent_decode(path.as_bytes()).map_err(|at| FileUriError::BadEscape {
        uri: uri.to_owned(),
        offset: path_offset + at,
    })?;
    platform_path(bytes).map_err(|at| FileUriError::BadEscape {
        uri: uri.to_owned(),
        offset: path_offset + at,
    })
}

/// Decodes `%XX` escapes; the error is the offset of a bad or NUL-producing `%`.
fn percent_decode(input: &[u8]) -> Result<Vec<u8>, usize> {
    let hex = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    };
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'%' {
            let hi = input.get(i + 1).copied().and_then(hex);
            let lo = input.get(i + 2).copied().and_then(hex);
            match (hi, lo) {
                (Some(hi), Some(lo)) if hi != 0 || lo != 0 => out.push(hi << 4 | lo),
                _ => return Err(i),
            }
            i += 3;
        } else {
            out.push(input[i]);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(unix)]
fn platform_path(bytes: Vec<u8>) -> Result<PathBuf, usize> {
    use std::os::unix::ffi::OsStringExt;
    Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(not(unix))]
fn platform_path(bytes: Vec<u8>) -> Result<PathBuf, usize> {
    let text = String::from_utf8(bytes).map_err(|e| e.utf8_error().valid_up_to())?;
    // `/C:/dir` is the URI spelling of the drive path `C:/dir`.
    let b = text.as_bytes();
    let text = if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        &text[1..]
    } else {
        &text[..]
    };
    Ok(PathBuf::from(text))
}
