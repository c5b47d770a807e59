//! Anchors the history provider understands: a file (a `file://` URI, an
//! absolute path or one relative to the working tree), optionally with
//! lines: `#L10`, `#L10-20` on a URI, or `path:10`, `path:10-20`.

use std::path::Path;

use contextgraph_search::uri::parse_anchor;

/// One anchor inside the working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineAnchor {
    /// The file, relative to the working tree.
    pub rel_path: String,
    /// The lines (1-based, inclusive), when the anchor names some.
    pub lines: Option<(u32, u32)>,
}

/// Interpret `anchor` under `root`; `None` when it names nothing there.
pub fn parse(root: &Path, anchor: &str) -> Option<LineAnchor> {
    // `#L10-20` (a URI fragment naming lines).
    if let Some((base, frag)) = anchor.rsplit_once('#') {
        if let Some(lines) = frag.strip_prefix('L').and_then(line_range) {
            let t = parse_anchor(root, base)?;
            return Some(LineAnchor {
                rel_path: t.rel_path,
                lines: Some(lines),
            });
        }
    }
    // `path:10` / `path:10-20` (not a URI scheme: the part after the last
    // colon is a line range).
    if let Some((base, tail)) = anchor.rsplit_once(':') {
        if let Some(lines) = line_range(tail) {
            if let Some(t) = parse_anchor(root, base) {
                return Some(LineAnchor {
                    rel_path: t.rel_path,
                    lines: Some(lines),
                });
            }
        }
    }
    let t = parse_anchor(root, anchor)?;
    Some(LineAnchor {
        rel_path: t.rel_path,
        lines: None,
    })
}

/// `10` or `10-20` (1-based, start ≤ end).
fn line_range(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    let a: u32 = a.parse().ok()?;
    let b: u32 = b.strip_prefix('L').unwrap_or(b).parse().ok()?;
    (a >= 1 && a <= b).then_some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_from_fragments_and_colons() {
        let root = Path::new("/repo");
        assert_eq!(
            parse(root, "src/a.rs:12"),
            Some(LineAnchor {
                rel_path: "src/a.rs".into(),
                lines: Some((12, 12))
            })
        );
        assert_eq!(
            parse(root, "file:///repo/src/a.rs#L3-9"),
            Some(LineAnchor {
                rel_path: "src/a.rs".into(),
                lines: Some((3, 9))
            })
        );
        assert_eq!(
            parse(root, "/repo/src/a.rs"),
            Some(LineAnchor {
                rel_path: "src/a.rs".into(),
                lines: None
            })
        );
        // A symbol fragment is not a line range: the file alone.
        assert_eq!(
            parse(root, "file:///repo/src/a.rs#net::retry"),
            Some(LineAnchor {
                rel_path: "src/a.rs".into(),
                lines: None
            })
        );
        assert_eq!(
            parse(root, "src/a.rs:0"),
            Some(LineAnchor {
                rel_path: "src/a.rs:0".into(),
                lines: None
            })
        );
        assert_eq!(parse(root, "/elsewhere/x.rs:3"), None);
    }
}
