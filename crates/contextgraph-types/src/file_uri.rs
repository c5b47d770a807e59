//! `file://` URIs and local paths, both ways.
//!
//! One mapping for every crate that names files by URI: providers give each
//! frame its file's URI (F5) and hosts and the search library parse anchors
//! back to paths (G4). The SDK re-exports these from
//! `contextgraph_provider_sdk::file_provenance`.

use std::path::{Path, PathBuf};

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
