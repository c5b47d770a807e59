//! MCP resources → CGP frames: kind by MIME type, the text a frame carries,
//! and provenance back to the resource URI.

use contextgraph_provider_sdk::{
    file_uri_to_path, sha256_digest, whole_file_provenance, FrameBuilder,
};
use contextgraph_types::{ContextFrame, FrameKind, Provenance, Timestamp};
use rmcp::model::{Resource, ResourceContents};

/// Provenance type of an entry pointing at an MCP resource. Not `file`: the
/// bytes came from an MCP server, and F5's re-read-from-disk rule applies
/// only to what a file on this machine holds (a `file` entry is added only
/// when the bridge checked that the disk holds exactly these bytes).
pub const MCP_RESOURCE: &str = "mcp_resource";

/// Title and citation label of a resource whose title, name and URI are all
/// blank.
pub const UNTITLED: &str = "untitled MCP resource";

/// Code-like MIME subtypes served as `snippet` frames; all other text is `doc`.
const CODE_MIME: &[&str] = &[
    "application/javascript",
    "application/typescript",
    "application/json",
    "application/toml",
    "application/xml",
    "application/x-sh",
    "application/yaml",
    "application/x-yaml",
    "text/javascript",
    "text/css",
    "text/xml",
    "text/csv",
];

/// File extensions taken as code when the server gives no MIME type.
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "py", "js", "ts", "tsx", "jsx", "go", "java", "c", "h", "cc", "cpp", "hpp", "cs", "rb",
    "php", "swift", "kt", "scala", "sh", "json", "toml", "yaml", "yml", "xml", "sql", "css",
];

/// The frame kind of a resource: `snippet` for source code and structured
/// data (by MIME type, or by extension when none is given), `doc` otherwise.
pub fn kind_for(mime: Option<&str>, uri: &str) -> FrameKind {
    match mime.map(|m| m.split(';').next().unwrap_or(m).trim().to_ascii_lowercase()) {
        Some(m) if m.starts_with("text/x-") || CODE_MIME.contains(&m.as_str()) => {
            FrameKind::Snippet
        }
        Some(m) if m.ends_with("+json") || m.ends_with("+xml") => FrameKind::Snippet,
        Some(_) => FrameKind::Doc,
        None => {
            let path = uri.split(['?', '#']).next().unwrap_or(uri);
            let ext = path
                .rsplit('/')
                .next()
                .and_then(|name| name.rsplit_once('.'))
                .map(|(_, ext)| ext.to_ascii_lowercase());
            match ext {
                Some(e) if CODE_EXTENSIONS.contains(&e.as_str()) => FrameKind::Snippet,
                _ => FrameKind::Doc,
            }
        }
    }
}

/// What a `resources/read` gave, as frame content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceText {
    /// The text parts, joined by `\n` when there are several, and the MIME
    /// type of the first.
    Text {
        /// The content.
        text: String,
        /// MIME type of the first text part, when declared.
        mime: Option<String>,
    },
    /// Only binary (`blob`) parts: nothing a prompt can quote.
    Binary,
    /// Larger than the configured limit.
    TooLarge {
        /// Its size in bytes.
        bytes: usize,
    },
}

/// The frame content of a read's `contents`, bounded by `max_bytes`.
pub fn resource_text(contents: &[ResourceContents], max_bytes: usize) -> ResourceText {
    let mut parts: Vec<&str> = Vec::new();
    let mut mime = None;
    for c in contents {
        if let ResourceContents::TextResourceContents {
            text, mime_type, ..
        } = c
        {
            if parts.is_empty() {
                mime = mime_type.clone();
            }
            parts.push(text);
        }
    }
    if parts.is_empty() {
        return ResourceText::Binary;
    }
    let bytes = parts.iter().map(|p| p.len()).sum::<usize>() + parts.len() - 1;
    if bytes > max_bytes {
        return ResourceText::TooLarge { bytes };
    }
    ResourceText::Text {
        text: parts.join("\n"),
        mime,
    }
}

/// When the content of `resource` was recorded: the server's
/// `lastModified` annotation when it is an exact F4 UTC timestamp, else
/// `read_at`, the instant the bridge read it (all the bridge can vouch
/// for). An `as_of` pin before that instant therefore excludes the frame:
/// the bridge cannot show what the resource held back then.
pub fn recorded_at(resource: &Resource, read_at: Timestamp) -> Timestamp {
    resource
        .annotations
        .as_ref()
        .and_then(|a| a.last_modified.as_deref())
        .and_then(|t| Timestamp::parse(t).ok())
        .unwrap_or(read_at)
}

/// The frame for one read resource. The id is the resource URI (stable, and
/// what `verify` reads again); cost and digest come from the content.
pub fn resource_frame(
    resource: &Resource,
    text: &str,
    mime: Option<&str>,
    score: f32,
    server_name: &str,
    recorded: Timestamp,
) -> ContextFrame {
    let kind = kind_for(mime.or(resource.mime_type.as_deref()), &resource.uri);
    // The first non-blank of title, name and URI: a server may send all
    // three blank (a URI of spaces), and a blank title or citation label
    // would make the host quarantine the whole answer (F2, F3).
    let title = [
        resource.title.as_deref(),
        Some(resource.name.as_str()),
        Some(resource.uri.as_str()),
    ]
    .into_iter()
    .flatten()
    .find(|t| !t.trim().is_empty())
    .unwrap_or(UNTITLED)
    .to_owned();
    let mut builder = FrameBuilder::new(resource.uri.clone(), kind, title.clone(), text)
        .uri(resource.uri.clone())
        .score(score)
        .recorded_at(recorded)
        .citation_label(title)
        .provenance(Provenance {
            kind: MCP_RESOURCE.to_owned(),
            uri: Some(resource.uri.clone()),
            range: None,
            digest: Some(sha256_digest(text.as_bytes())),
            method: Some("resources/read".to_owned()),
            by: Some(server_name.to_owned()),
        });
    if let Some(file) = disk_matches(&resource.uri, text) {
        builder = builder.provenance(file);
    }
    builder.build()
}

/// A `file` provenance entry (F5, whole resource) when `uri` is a local
/// `file:` URI whose bytes on disk are exactly `text`; `None` otherwise, so
/// a server that transforms files never gets a false `file` claim.
fn disk_matches(uri: &str, text: &str) -> Option<Provenance> {
    let path = file_uri_to_path(uri).ok()?;
    let len = std::fs::metadata(&path).ok()?.len();
    if len != text.len() as u64 {
        return None;
    }
    let bytes = std::fs::read(&path).ok()?;
    (bytes == text.as_bytes())
        .then(|| whole_file_provenance(&path, &bytes, "resources/read", "cgp bridge mcp").ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_follows_mime_then_extension() {
        assert_eq!(kind_for(Some("text/markdown"), "x"), FrameKind::Doc);
        assert_eq!(
            kind_for(Some("text/x-rust; charset=utf-8"), "x"),
            FrameKind::Snippet
        );
        assert_eq!(kind_for(Some("application/json"), "x"), FrameKind::Snippet);
        assert_eq!(
            kind_for(Some("application/vnd.api+json"), "x"),
            FrameKind::Snippet
        );
        assert_eq!(kind_for(None, "file:///a/b/main.rs"), FrameKind::Snippet);
        assert_eq!(kind_for(None, "memo://notes/readme"), FrameKind::Doc);
        assert_eq!(kind_for(Some("text/plain"), "file:///a.rs"), FrameKind::Doc);
    }

    #[test]
    fn text_parts_join_and_blobs_and_size_are_bounded() {
        let parts = vec![
            ResourceContents::text("ab", "u"),
            ResourceContents::blob("AAAA", "u"),
            ResourceContents::text("cd", "u"),
        ];
        assert_eq!(
            resource_text(&parts, 100),
            ResourceText::Text {
                text: "ab\ncd".into(),
                mime: Some("text/plain".into())
            }
        );
        assert_eq!(
            resource_text(&parts, 4),
            ResourceText::TooLarge { bytes: 5 }
        );
        assert_eq!(
            resource_text(&[ResourceContents::blob("AA", "u")], 10),
            ResourceText::Binary
        );
    }

    #[test]
    fn frame_cost_digest_and_provenance_describe_the_content() {
        let r = Resource::new("memo://notes/retry", "retry").with_title("Retry policy");
        let f = resource_frame(
            &r,
            "retry three times",
            None,
            0.7,
            "notes",
            Timestamp::now(),
        );
        assert_eq!(f.id, "memo://notes/retry");
        assert_eq!(f.token_cost, 5); // 17 bytes -> ceil(17 / 4) (B3)
        assert_eq!(
            f.content_digest.as_deref(),
            Some(sha256_digest(b"retry three times").as_str())
        );
        assert_eq!(f.provenance.len(), 1);
        assert_eq!(f.provenance[0].kind, MCP_RESOURCE);
        assert_eq!(f.provenance[0].digest, f.content_digest);
        assert_eq!(f.citation_label.as_deref(), Some("Retry policy"));
    }

    /// Found by the `mcp_bridge` fuzz target
    /// (`fuzz/regressions/mcp_bridge/blank-uri-and-name`): a resource whose
    /// URI is blank and that has no name gave a frame with a blank title
    /// and no citation label, which the host quarantines.
    #[test]
    fn a_resource_with_only_blank_names_still_gets_a_title_and_a_label() {
        let r = Resource::new(" ", "");
        let f = resource_frame(&r, "text", None, 0.5, "notes", Timestamp::now());
        assert_eq!(f.title, UNTITLED);
        assert_eq!(f.citation_label.as_deref(), Some(UNTITLED));
        assert!(f.validate().is_empty(), "{:?}", f.validate());
        let named = Resource::new("mem://a", " ").with_title("\t");
        let f = resource_frame(&named, "text", None, 0.5, "notes", Timestamp::now());
        assert_eq!(f.title, "mem://a");
    }

    #[test]
    fn recorded_at_prefers_an_exact_last_modified_and_falls_back_to_the_read_time() {
        let read_at = Timestamp::parse("2026-01-02T03:04:05Z").unwrap();
        let plain = Resource::new("memo://a", "a");
        assert_eq!(recorded_at(&plain, read_at), read_at);
        let mut annotated = Resource::new("memo://b", "b");
        let mut a = rmcp::model::Annotations::default();
        a.last_modified = Some("2025-05-06T07:08:09Z".into());
        annotated.annotations = Some(a.clone());
        assert_eq!(
            recorded_at(&annotated, read_at).to_wire(),
            "2025-05-06T07:08:09Z"
        );
        a.last_modified = Some("2025-05-06T07:08:09+02:00".into()); // not F4: ignored
        annotated.annotations = Some(a);
        assert_eq!(recorded_at(&annotated, read_at), read_at);
    }

    #[test]
    fn a_file_entry_is_added_only_when_the_disk_holds_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        std::fs::write(&path, "same bytes\n").unwrap();
        let uri = contextgraph_provider_sdk::path_to_file_uri(&path).unwrap();
        let r = Resource::new(uri.clone(), "a.md");
        let same = resource_frame(&r, "same bytes\n", None, 0.5, "fs", Timestamp::now());
        assert!(same
            .provenance
            .iter()
            .any(|p| p.is_file() && p.uri.as_deref() == Some(uri.as_str())));
        let other = resource_frame(&r, "other bytes", None, 0.5, "fs", Timestamp::now());
        assert!(!other.provenance.iter().any(Provenance::is_file));
    }
}
