//! What the provider serves: a built-in set of documents, code and graph
//! neighbourhoods, or the text files of a folder (`--dir`).
//!
//! File-backed frames are re-read from disk on every query and every verify,
//! so their content, `content_digest` (D1) and provenance digest (F5) always
//! describe the bytes on disk *at retrieval time*, which is exactly what a
//! checker re-reading the file compares against; and `verify` answers
//! `stale` as soon as a file changes. The built-in files are written to disk
//! at start-up for that reason: a checker must be able to open them. On
//! Linux they are unnamed files ([`Corpus::builtin_unnamed`], see
//! [`unnamed`](crate::unnamed)), which vanish with the process however it
//! ends; elsewhere they go into a scratch folder ([`Corpus::builtin`]).
//!
//! Every file is split the same way: a file of at most [`WINDOW_LINES`] lines
//! is one frame (`L1-<n>`), a longer one is one frame per 20-line window; the
//! line rule (terminators included) is the SDK's `read_range` rule.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use contextgraph_provider_sdk::{count_lines, file_excerpt, path_to_file_uri, FrameBuilder};
use contextgraph_types::{
    ContextFrame, FrameEmbedding, FrameKind, LineRange, Provenance, Relation, Timestamp,
};

use crate::relevance::{embed, EMBEDDINGS_FINGERPRINT};

/// Lines per frame for files longer than this.
pub const WINDOW_LINES: u32 = 20;

/// Most files a `--dir` corpus serves (the first ones in path order).
pub const MAX_DIR_FILES: usize = 1000;

/// Largest file a `--dir` corpus serves; bigger files are skipped, because
/// every query re-reads every file.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Most bytes a `--dir` corpus serves in total (what one query re-reads).
pub const MAX_DIR_BYTES: u64 = 16 * 1024 * 1024;

/// Deepest folder nesting a `--dir` walk descends into.
const MAX_DEPTH: usize = 32;

/// The provenance `method` of file-backed frames.
const FILE_METHOD: &str = "file-read";

/// Why a corpus could not be set up; each message names the path and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CorpusError {
    /// The `--dir` folder cannot be listed.
    #[error("cannot serve --dir {path:?}: {source}; pass a readable folder")]
    Dir {
        /// The folder.
        path: PathBuf,
        /// The I/O failure.
        source: io::Error,
    },
    /// A built-in corpus file could not be written into the scratch folder.
    #[error("cannot write the built-in corpus into {path:?}: {source}; check that the temporary folder (TMPDIR) is writable")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        source: io::Error,
    },
}

/// When a file's frames say they were recorded.
#[derive(Debug, Clone, Copy)]
enum RecordedAt {
    /// A fixed instant: the built-in corpus spreads these out so `as_of` has
    /// something to filter.
    Fixed(Timestamp),
    /// The file's modification time, read with the content.
    Modified,
}

/// A file served as one frame or several windows.
#[derive(Debug, Clone)]
struct FileSource {
    /// Display path relative to the corpus root, `/`-separated; frame ids start with it.
    rel: String,
    path: PathBuf,
    kind: FrameKind,
    /// The title of a single-window file; windows append their lines.
    title: String,
    recorded_at: RecordedAt,
}

/// The frames the provider can serve, before scoring.
#[derive(Debug, Clone)]
pub struct Corpus {
    files: Vec<FileSource>,
    /// Frames not backed by a file (graph neighbourhoods), complete but unscored.
    derived: Vec<ContextFrame>,
    root: PathBuf,
    /// Unnamed files exist only while open: these keep them alive.
    _keep_open: Vec<Arc<File>>,
}

impl Corpus {
    /// The folder the corpus lives in (the scratch folder for the built-in
    /// one, `/proc/<pid>/fd` for the unnamed built-in one).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every frame currently servable, content re-read from disk now, score 0.
    /// `by` is the provider name recorded in provenance. A file that vanished
    /// or stopped being UTF-8 since start-up simply contributes no frames
    /// (its identities then verify as `gone`).
    pub fn frames(&self, by: &str) -> Vec<ContextFrame> {
        let mut frames = Vec::new();
        for file in &self.files {
            read_file_frames(file, by, &mut frames);
        }
        for frame in &self.derived {
            let mut frame = frame.clone();
            for p in &mut frame.provenance {
                p.by = Some(by.to_owned());
            }
            frames.push(frame);
        }
        frames
    }

    /// Add a frame that is not backed by a file (used by `unknown-kind`).
    pub(crate) fn push_derived(&mut self, frame: ContextFrame) {
        self.derived.push(frame);
    }

    /// The built-in corpus, written into `root` (which must exist): three
    /// documents, two source files (one of them two windows long) and two
    /// graph frames whose `uri`/relations point at those files, so anchors
    /// (G4) have 0-hop and 1-hop matches.
    pub fn builtin(root: &Path) -> Result<Corpus, CorpusError> {
        let root = fs::canonicalize(root).map_err(|source| CorpusError::Write {
            path: root.to_path_buf(),
            source,
        })?;
        let mut paths = Vec::new();
        for (rel, _, _, _, text) in BUILTIN_FILES {
            let path = root.join(rel);
            write_file(&path, text)?;
            paths.push(path);
        }
        Ok(Corpus::builtin_at(root, paths, Vec::new()))
    }

    /// The built-in corpus as unnamed files (Linux): the same files and
    /// frames as [`builtin`](Self::builtin), each file reachable as
    /// `/proc/<pid>/fd/<n>` while this process runs and gone with it, so
    /// nothing is left behind even by SIGKILL. The files are created on the
    /// file system of the temporary folder, but with no name in it.
    #[cfg(target_os = "linux")]
    pub fn builtin_unnamed() -> Result<Corpus, CorpusError> {
        let tmp = std::env::temp_dir();
        let mut paths = Vec::new();
        let mut open = Vec::new();
        for (rel, _, _, _, text) in BUILTIN_FILES {
            let (file, path) =
                crate::unnamed::unnamed_file(&tmp, text).map_err(|source| CorpusError::Write {
                    path: tmp.join(rel),
                    source,
                })?;
            open.push(Arc::new(file));
            paths.push(path);
        }
        let root = PathBuf::from(format!("/proc/{}/fd", std::process::id()));
        Ok(Corpus::builtin_at(root, paths, open))
    }

    /// The built-in corpus whose files are at `paths` (in [`BUILTIN_FILES`]
    /// order), already written.
    fn builtin_at(root: PathBuf, paths: Vec<PathBuf>, open: Vec<Arc<File>>) -> Corpus {
        let mut files = Vec::new();
        for ((rel, kind, title, recorded_at, _), path) in BUILTIN_FILES.into_iter().zip(paths) {
            files.push(FileSource {
                rel: rel.to_owned(),
                path,
                kind,
                title: title.to_owned(),
                recorded_at: RecordedAt::Fixed(fixed_time(recorded_at)),
            });
        }
        let uri = |rel: &str| {
            files
                .iter()
                .find(|f| f.rel == rel)
                .and_then(|f| path_to_file_uri(&f.path).ok())
                .unwrap_or_else(|| rel.to_owned())
        };
        let derived = vec![
            graph_frame(
                "graph:net::client::Client::send",
                "Call graph of Client::send",
                "call graph: Client::send",
                "net::client::Client::send calls net::retry::with_backoff, which reads RetryPolicy.max_attempts and RetryPolicy.backoff_ms; a timed-out attempt counts as a failed try.\n",
                &uri("src/net/client.rs"),
                vec![relation("code.calls", &uri("src/net/retry.rs"), "net::retry::with_backoff")],
                "2025-06-01T00:00:00Z",
            ),
            graph_frame(
                "graph:docs/retry.md",
                "What documents the retry code",
                "doc links: retry.md",
                "docs/retry.md documents net::retry (RetryPolicy and with_backoff) and the retry behaviour of net::client::Client.\n",
                &uri("docs/retry.md"),
                vec![
                    relation("doc.documents", &uri("src/net/retry.rs"), "net::retry"),
                    relation("doc.documents", &uri("src/net/client.rs"), "net::client::Client"),
                ],
                "2026-02-14T18:00:00Z",
            ),
        ];
        Corpus {
            files,
            derived,
            root,
            _keep_open: open,
        }
    }

    /// The text files under `dir` (recursively, in path order): hidden
    /// entries, `target/` and `node_modules/` are skipped, symlinks are not
    /// followed, and files that are empty, not UTF-8, or larger than
    /// [`MAX_FILE_BYTES`] are left out, as is everything past
    /// [`MAX_DIR_FILES`] files or [`MAX_DIR_BYTES`] bytes. Markdown and
    /// plain text become `doc` frames, everything else `snippet` frames;
    /// `recorded_at` is the file's modification time.
    pub fn from_dir(dir: &Path) -> Result<Corpus, CorpusError> {
        let root = fs::canonicalize(dir).map_err(|source| CorpusError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut paths = Vec::new();
        walk(&root, 0, &mut paths).map_err(|source| CorpusError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        paths.sort();
        let mut files = Vec::new();
        let mut total = 0u64;
        for path in paths {
            if files.len() >= MAX_DIR_FILES {
                break;
            }
            let Some(size) = servable_text_size(&path) else {
                continue;
            };
            if total + size > MAX_DIR_BYTES {
                break;
            }
            total += size;
            let rel = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.push(FileSource {
                kind: kind_for(&path),
                title: rel.clone(),
                rel,
                path,
                recorded_at: RecordedAt::Modified,
            });
        }
        Ok(Corpus {
            files,
            derived: Vec::new(),
            root,
            _keep_open: Vec::new(),
        })
    }
}

/// The windows of a file with `lines` lines: one for a short file, 20-line
/// windows (the last one shorter) for a long one.
pub fn windows(lines: usize) -> Vec<LineRange> {
    let lines = u32::try_from(lines).unwrap_or(u32::MAX);
    let mut out = Vec::new();
    let mut start = 1u32;
    while start <= lines {
        let end = start.saturating_add(WINDOW_LINES - 1).min(lines);
        if let Some(range) = LineRange::new(start, end) {
            out.push(range);
        }
        match end.checked_add(1) {
            Some(next) => start = next,
            None => break,
        }
    }
    out
}

fn read_file_frames(file: &FileSource, by: &str, out: &mut Vec<ContextFrame>) {
    let Ok(meta) = fs::metadata(&file.path) else {
        return;
    };
    if meta.len() > MAX_FILE_BYTES {
        return;
    }
    let Ok(bytes) = fs::read(&file.path) else {
        return;
    };
    // Windows end at newlines, so every window of a UTF-8 file is UTF-8.
    if std::str::from_utf8(&bytes).is_err() {
        return;
    }
    let recorded_at = match file.recorded_at {
        RecordedAt::Fixed(t) => t,
        RecordedAt::Modified => meta
            .modified()
            .map(Timestamp::from_system_time)
            .unwrap_or_else(|_| Timestamp::from_unix(0, 0)),
    };
    let ranges = windows(count_lines(&bytes));
    let single = ranges.len() == 1;
    for range in ranges {
        let Ok(excerpt) = file_excerpt(&file.path, &bytes, range, FILE_METHOD, by) else {
            continue;
        };
        let title = if single {
            file.title.clone()
        } else {
            format!("{} (lines {}-{})", file.title, range.start, range.end)
        };
        let id = format!("{}#{range}", file.rel);
        let Ok(builder) = excerpt.frame(id, file.kind.clone(), title) else {
            continue;
        };
        // Labelled by the corpus name of the file (an unnamed file's path
        // ends in a descriptor number, which means nothing to a reader).
        let name = file.rel.rsplit('/').next().unwrap_or(&file.rel);
        let builder = builder.citation_label(format!("{name} {range}"));
        out.push(with_embedding(builder.recorded_at(recorded_at).build()));
    }
}

/// Attach the frame's embedding in the declared space (E1: the vector's
/// length matches the fingerprint's dimension).
fn with_embedding(mut frame: ContextFrame) -> ContextFrame {
    let text = format!("{} {}", frame.title, frame.content.as_deref().unwrap_or(""));
    frame.embedding = Some(FrameEmbedding {
        fingerprint: EMBEDDINGS_FINGERPRINT.to_owned(),
        vector: Some(embed(&text)),
    });
    frame
}

fn relation(rel: &str, target_uri: &str, display_name: &str) -> Relation {
    Relation {
        rel: rel.to_owned(),
        target_uri: target_uri.to_owned(),
        display_name: Some(display_name.to_owned()),
    }
}

/// A graph frame: derived content (not a file excerpt), so its provenance
/// is a `derivation`, and it reaches files through `uri` and relations.
fn graph_frame(
    id: &str,
    title: &str,
    label: &str,
    content: &str,
    uri: &str,
    relations: Vec<Relation>,
    recorded_at: &str,
) -> ContextFrame {
    let frame = FrameBuilder::new(id, FrameKind::Graph, title, content)
        .uri(uri)
        .citation_label(label)
        .recorded_at(fixed_time(recorded_at))
        .relations(relations)
        .provenance(derivation("static-call-graph"))
        .build();
    with_embedding(frame)
}

/// A `derivation` provenance entry (the content is computed, not read);
/// `by` is filled in with the provider name when the frame is served.
pub(crate) fn derivation(method: &str) -> Provenance {
    Provenance {
        kind: "derivation".to_owned(),
        method: Some(method.to_owned()),
        ..Provenance::default()
    }
}

/// The built-in timestamps are constants checked by a unit test, so the
/// fallback to the epoch is never taken.
fn fixed_time(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap_or_else(|_| Timestamp::from_unix(0, 0))
}

fn write_file(path: &Path, text: &str) -> Result<(), CorpusError> {
    let err = |source| CorpusError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(err)?;
    }
    fs::write(path, text).map_err(err)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        // `file_type` does not follow symlinks: a link out of the folder is not served.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth < MAX_DEPTH {
            // An unreadable subfolder is skipped rather than failing the whole corpus.
            let _ = walk(&entry.path(), depth + 1, out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
    Ok(())
}

/// The size of a file worth serving: non-empty, small enough, UTF-8, no NUL.
fn servable_text_size(path: &Path) -> Option<u64> {
    let size = fs::metadata(path).ok()?.len();
    if size == 0 || size > MAX_FILE_BYTES {
        return None;
    }
    let bytes = fs::read(path).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    (!text.contains('\0')).then_some(size)
}

fn kind_for(path: &Path) -> FrameKind {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" | "txt" | "rst" | "adoc" => FrameKind::Doc,
        _ => FrameKind::Snippet,
    }
}

/// `(relative path, kind, title, recorded_at, text)` of each built-in file.
/// The timestamps are spread over 2024–2026 so that `as_of` pins in between
/// visibly remove frames.
const BUILTIN_FILES: [(&str, FrameKind, &str, &str, &str); 5] = [
    (
        "docs/retry.md",
        FrameKind::Doc,
        "Retry policy",
        "2024-03-01T09:00:00Z",
        "# Retry policy\n\nOutgoing requests are retried by `net::retry::with_backoff`.\nThe policy has two knobs:\n\n- `max_attempts` bounds the number of tries (default 4).\n- `backoff_ms` is the initial delay; it doubles after each attempt.\n\nRetries stop early when the server answers 4xx, because\nrepeating a request the server rejected cannot succeed.\n",
    ),
    (
        "docs/timeouts.md",
        FrameKind::Doc,
        "Timeouts",
        "2025-01-10T12:00:00Z",
        "# Timeouts\n\nEvery request has a deadline of 30 seconds, set by `Client::timeout`.\nA timed-out attempt counts against `max_attempts` like any failure.\nConnection setup has its own 5 second limit.\n",
    ),
    (
        "docs/changelog.md",
        FrameKind::Doc,
        "Changelog",
        "2026-05-02T08:30:00.5Z",
        "# Changelog\n\n## 0.4.0\n- Retry jitter: each backoff delay is randomised by up to 20%.\n- `max_attempts` now defaults to 4 (was 3).\n\n## 0.3.0\n- Added per-host connection limits.\n",
    ),
    (
        "src/net/retry.rs",
        FrameKind::Snippet,
        "net::retry",
        "2024-11-20T16:45:00Z",
        "//! Retry with exponential backoff.\n\nuse std::time::Duration;\n\n/// How often and how patiently to retry.\npub struct RetryPolicy {\n    /// Upper bound on tries, the first one included.\n    pub max_attempts: u32,\n    /// Delay before the second try; doubled after each failure.\n    pub backoff_ms: u64,\n}\n\nimpl Default for RetryPolicy {\n    fn default() -> Self {\n        RetryPolicy { max_attempts: 4, backoff_ms: 100 }\n    }\n}\n\n/// Run `op` until it succeeds or the policy gives up.\npub fn with_backoff<T, E>(policy: &RetryPolicy, mut op: impl FnMut() -> Result<T, E>) -> Result<T, E> {\n    let mut delay = Duration::from_millis(policy.backoff_ms);\n    let mut attempt = 1;\n    loop {\n        match op() {\n            Ok(value) => return Ok(value),\n            Err(e) if attempt >= policy.max_attempts => return Err(e),\n            Err(_) => {\n                std::thread::sleep(delay);\n                delay *= 2;\n                attempt += 1;\n            }\n        }\n    }\n}\n",
    ),
    (
        "src/net/client.rs",
        FrameKind::Snippet,
        "net::client",
        "2025-08-14T10:15:30Z",
        "//! The HTTP client: the one place that applies timeouts and retries.\n\nuse crate::net::retry::{with_backoff, RetryPolicy};\nuse std::time::Duration;\n\npub struct Client {\n    pub timeout: Duration,\n    pub retry: RetryPolicy,\n}\n\nimpl Client {\n    /// Send `request`, retrying transient failures per `self.retry`.\n    pub fn send(&self, request: &Request) -> Result<Response, Error> {\n        with_backoff(&self.retry, || self.send_once(request))\n    }\n}\n",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_timestamps_are_protocol_timestamps() {
        for (rel, _, _, at, _) in BUILTIN_FILES {
            assert!(Timestamp::is_valid(at), "{rel}: {at}");
        }
    }

    #[test]
    fn windows_cover_every_line_once() {
        assert!(windows(0).is_empty());
        assert_eq!(windows(7), vec![LineRange::new(1, 7).unwrap()]);
        assert_eq!(windows(20), vec![LineRange::new(1, 20).unwrap()]);
        assert_eq!(
            windows(45),
            vec![
                LineRange::new(1, 20).unwrap(),
                LineRange::new(21, 40).unwrap(),
                LineRange::new(41, 45).unwrap()
            ]
        );
    }
}
