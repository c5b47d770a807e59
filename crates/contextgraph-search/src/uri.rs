//! URIs the provider hands out and accepts.
//!
//! - A frame's `uri` is its file's `file://` URI (from the SDK's
//!   [`path_to_file_uri`], over the canonical workspace root), so a host that
//!   anchors on an open file finds every frame of that file at 0 hops (G4).
//! - **Symbol URIs** are the defining file's URI plus a fragment naming the
//!   chunk: `file:///repo/src/net.rs#net::retry_loop`. The fragment is the
//!   frame's local id (the qualified name, with `~2`, `~3` … for repeated
//!   names in one file), percent-encoded where RFC 3986 does not allow the
//!   byte in a fragment. A symbol frame carries its own symbol URI as its
//!   `code.defines` target, and callers carry it as their `code.calls`
//!   target, so anchoring on a symbol URI finds the definition and its
//!   callers at 1 hop.
//! - **Module URIs** name imports that do not resolve to a workspace file:
//!   `cgp-module:<language>:<module as written>` (e.g. `cgp-module:python:os.path`).
//! - **Content references** of compact frames:
//!   `cgp-workspace:<frame id>?digest=<sha256 of the full source>`; see
//!   the workspace provider's `resolve`.

use std::path::Path;

use contextgraph_types::file_uri::{file_uri_to_path, path_to_file_uri};

/// Scheme of unresolved import targets.
pub const MODULE_SCHEME: &str = "cgp-module:";

/// Scheme of compact frames' content references.
pub const CONTENT_REF_SCHEME: &str = "cgp-workspace:";

/// The `file://` URI of `rel_path` under `root`.
pub fn file_uri(root: &Path, rel_path: &str) -> String {
    path_to_file_uri(&root.join(rel_path))
        .unwrap_or_else(|_| format!("file://{}/{rel_path}", root.display()))
}

/// The symbol URI of chunk `local_id` in the file whose URI is `file_uri`.
pub fn symbol_uri(file_uri: &str, local_id: &str) -> String {
    let mut out = String::with_capacity(file_uri.len() + local_id.len() + 1);
    out.push_str(file_uri);
    out.push('#');
    for b in local_id.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
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
                    | b'/'
                    | b'?'
            );
        if keep {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The module URI of an unresolved import.
pub fn module_uri(language: &str, module: &str) -> String {
    format!("{MODULE_SCHEME}{language}:{module}")
}

/// What an anchor names inside this workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorTarget {
    /// The file, relative to the root.
    pub rel_path: String,
    /// The chunk, when the anchor is a symbol URI.
    pub local_id: Option<String>,
}

/// Interpret an anchor: a `file://` URI (optionally with a symbol fragment),
/// an absolute path, or a path relative to the root. `None` when it names
/// nothing under `root`.
pub fn parse_anchor(root: &Path, anchor: &str) -> Option<AnchorTarget> {
    let (base, fragment) = match anchor.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (anchor, None),
    };
    // `get(..5)` rather than `[..5]`: an anchor is peer-controlled, and a
    // multi-byte character across byte 5 (`ééé`) must not panic (N1).
    let is_file_uri = base
        .get(..5)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("file:"));
    let path = if is_file_uri {
        file_uri_to_path(base).ok()?
    } else if Path::new(base).is_absolute() {
        Path::new(base).to_path_buf()
    } else {
        root.join(base)
    };
    let rel = path.strip_prefix(root).ok()?;
    let rel_path = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    if rel_path.is_empty() {
        return None;
    }
    Some(AnchorTarget {
        rel_path,
        local_id: fragment.map(percent_decode),
    })
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| char::from(b).to_digit(16).map(|d| d as u8);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_uris_round_trip_through_anchor_parsing() {
        let root = Path::new("/repo");
        let f = file_uri(root, "src/net.rs");
        assert_eq!(f, "file:///repo/src/net.rs");
        let s = symbol_uri(&f, "impl Display for Foo");
        assert_eq!(s, "file:///repo/src/net.rs#impl%20Display%20for%20Foo");
        let a = parse_anchor(root, &s).unwrap();
        assert_eq!(a.rel_path, "src/net.rs");
        assert_eq!(a.local_id.as_deref(), Some("impl Display for Foo"));
        assert_eq!(
            parse_anchor(root, "src/net.rs").unwrap().rel_path,
            "src/net.rs"
        );
        assert_eq!(parse_anchor(root, "file:///elsewhere/x.rs"), None);
    }

    /// N1: a non-ASCII anchor whose byte 5 falls inside a character (`ééé`,
    /// `文档/说明.md`) is a relative path, not a panic.
    #[test]
    fn non_ascii_anchors_never_slice_inside_a_character() {
        let root = Path::new("/repo");
        for anchor in [
            "ééé",
            "文档/说明.md",
            "fileé",
            "filé:x",
            "é#é",
            "#文",
            "文#%e6%96%87",
        ] {
            let _ = parse_anchor(root, anchor);
        }
        assert_eq!(parse_anchor(root, "ééé").unwrap().rel_path, "ééé");
        assert_eq!(
            parse_anchor(root, "文档/说明.md").unwrap().rel_path,
            "文档/说明.md"
        );
        let a = parse_anchor(root, "src/a.rs#%e6%96%87").unwrap();
        assert_eq!(a.local_id.as_deref(), Some("文"));
    }
}
