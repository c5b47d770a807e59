//! `doc.documents` edges: a section that names a file existing in the folder
//! (a relative Markdown link, or a path in inline code) documents it.
//!
//! Edges are found when a file is indexed, bounded per section (the number of
//! names examined and of edges kept), because each candidate costs a file
//! system lookup.

use std::path::Path;

use contextgraph_provider_sdk::path_to_file_uri;
use contextgraph_types::Relation;

use crate::walk::existing_file_inside;

/// The relation name (the protocol's recommended vocabulary).
pub const DOCUMENTS: &str = "doc.documents";

/// Most names looked up per section.
const MAX_CANDIDATES: usize = 64;
/// Most edges kept per section.
const MAX_RELATIONS: usize = 16;

/// The files `text` (a section of the document at `file_rel`) names that
/// exist inside `root`, as `doc.documents` relations labelled by their
/// relative path (G1, G2).
pub(crate) fn documented_files(text: &str, file_rel: &str, root: &Path) -> Vec<Relation> {
    let dir = file_rel.rsplit_once('/').map_or("", |(d, _)| d);
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (name, is_link) in names(text).take(MAX_CANDIDATES) {
        // Links are relative to the document; inline-code paths are usually
        // written relative to the repository root, so try that too.
        let resolved = [Some(dir), (!is_link).then_some("")]
            .into_iter()
            .flatten()
            .filter_map(|base| normalise(base, name))
            .find_map(|rel| {
                let uri = path_to_file_uri(&existing_file_inside(root, &rel)?).ok()?;
                Some((rel, uri))
            });
        let Some((rel, target_uri)) = resolved else {
            continue;
        };
        if rel == file_rel || seen.contains(&rel) {
            continue;
        }
        seen.push(rel.clone());
        out.push(Relation {
            rel: DOCUMENTS.to_owned(),
            target_uri,
            display_name: Some(rel),
        });
        if out.len() == MAX_RELATIONS {
            break;
        }
    }
    out
}

/// Candidate names in `text`: Markdown link targets `](target)` (`true`) and
/// inline-code spans that look like paths (`false`).
fn names(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let links = text.match_indices("](").filter_map(|(i, _)| {
        let rest = &text[i + 2..];
        let end = rest.find([')', ' ', '\n', '\r', '\t'])?;
        let target = rest[..end].trim_start_matches('<').trim_end_matches('>');
        Some((target, true))
    });
    let code = text
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|s| {
            !s.is_empty() && s.len() <= 256 && !s.contains(char::is_whitespace) && s.contains('.')
        })
        .map(|s| (s, false));
    links.chain(code)
}

/// `name` joined to `base` and normalised lexically to a `/`-separated path
/// inside the root; `None` for URLs, anchors, absolute paths and paths that
/// climb out of the root.
fn normalise(base: &str, name: &str) -> Option<String> {
    let name = name.split(['#', '?']).next()?;
    if name.is_empty() || name.contains("://") || name.starts_with('/') || name.contains(':') {
        return None;
    }
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_stays_inside_the_root() {
        assert_eq!(normalise("docs", "retry.md"), Some("docs/retry.md".into()));
        assert_eq!(normalise("docs", "../src/a.rs#L3"), Some("src/a.rs".into()));
        assert_eq!(normalise("", "../etc/passwd"), None);
        assert_eq!(normalise("docs", "https://example.com/x.md"), None);
        assert_eq!(normalise("docs", "/etc/passwd"), None);
        assert_eq!(normalise("docs", "#anchor"), None);
    }

    #[test]
    fn names_finds_links_and_code_paths() {
        let text = "See [retry](retry.md) and `src/config.rs`, not `let x = 1`.";
        let got: Vec<_> = names(text).collect();
        assert_eq!(got, vec![("retry.md", true), ("src/config.rs", false)]);
    }
}
