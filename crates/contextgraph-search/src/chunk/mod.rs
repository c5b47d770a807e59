//! Turning one file's text into chunks: the future frames.
//!
//! Every chunk addresses whole lines `start_line..=end_line` of its file, so
//! its bytes are exactly what F5 hashes (lines including their terminating
//! newlines) and a frame's content can be re-read and re-hashed from disk at
//! any time. Code files are chunked by tree-sitter ([`code`]); Markdown and
//! prose by heading section ([`markdown`]); everything else, and any code file
//! whose grammar fails, by line windows ([`window`]). Whatever the method,
//! no chunk's region exceeds [`fit::MAX_CHUNK_BYTES`] unless it is a single
//! line ([`fit`]): every chunk can be served whole under a typical budget.

pub mod code;
pub mod fit;
pub mod markdown;
pub mod window;

use crate::lang::Language;

/// What frame kind a chunk becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChunkKind {
    /// A code definition (`symbol` frame).
    Symbol,
    /// A prose section (`doc` frame).
    Doc,
    /// A line window (`snippet` frame).
    Snippet,
}

impl ChunkKind {
    /// The protocol frame kind.
    pub fn frame_kind(&self) -> contextgraph_types::FrameKind {
        match self {
            ChunkKind::Symbol => contextgraph_types::FrameKind::Symbol,
            ChunkKind::Doc => contextgraph_types::FrameKind::Doc,
            ChunkKind::Snippet => contextgraph_types::FrameKind::Snippet,
        }
    }
}

/// What a definition is, for titles ("function `net::retry_loop`").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolInfo {
    /// The bare name (`retry_loop`).
    pub name: String,
    /// The scoped name a person reads (`net::retry_loop`, `Client.send`).
    pub qualified: String,
    /// What kind of definition (`function`, `struct`, `class`, …).
    pub kind_label: String,
}

/// An import found in a file, with the in-workspace files it may refer to.
/// Resolution against the file set happens at query time, so that adding the
/// imported file later needs no re-chunk of the importer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRef {
    /// The module as written (`crate::net`, `./util`, `os.path`).
    pub module: String,
    /// Workspace-relative paths it may name, most likely first.
    pub candidates: Vec<String>,
}

/// One chunk of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Frame kind.
    pub kind: ChunkKind,
    /// Id suffix, unique within the file (`net::retry_loop`, `L1-40`, `installation`).
    pub local_id: String,
    /// Human title without the path (`function net::retry_loop`, `Installation`).
    pub title: String,
    /// Present for symbol chunks.
    pub symbol: Option<SymbolInfo>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// How the region was found, recorded in provenance `method`.
    pub method: &'static str,
    /// A compact rendering (outline) for long items; `None` for short ones.
    pub outline: Option<String>,
    /// Lines of this chunk that belong to nested chunks and are therefore not
    /// indexed as this chunk's own text (a class does not match on its methods' bodies).
    pub nested: Vec<(u32, u32)>,
    /// Names this chunk calls.
    pub calls: Vec<String>,
    /// Type names this chunk references.
    pub references: Vec<String>,
    /// Names a doc section mentions in code spans (`doc.documents` candidates).
    pub documents: Vec<String>,
    /// Imports made by this chunk.
    pub imports: Vec<ImportRef>,
}

impl Chunk {
    /// A chunk with no symbol or edges.
    pub fn plain(
        kind: ChunkKind,
        local_id: String,
        title: String,
        start_line: u32,
        end_line: u32,
        method: &'static str,
    ) -> Chunk {
        Chunk {
            kind,
            local_id,
            title,
            symbol: None,
            start_line,
            end_line,
            method,
            outline: None,
            nested: Vec::new(),
            calls: Vec::new(),
            references: Vec::new(),
            documents: Vec::new(),
            imports: Vec::new(),
        }
    }
}

/// Items longer than this many lines get an outline for `compact` rendering.
pub const OUTLINE_MIN_LINES: u32 = 40;

/// Most names recorded per edge list of one chunk: bounds index size on
/// pathological files (a 10k-line function calling everything).
pub const MAX_EDGES_PER_CHUNK: usize = 64;

/// Bytes of line starts [`LineIndex::with_reused`] keeps for a thread's
/// next file at most (the index of a file of about 1.5 MB of 50-byte lines).
const LINE_STARTS_KEPT: usize = 256 << 10;

/// Byte offsets of line starts, so a line range maps to exact bytes.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Index the lines of `text`. A final line without a newline is a line;
    /// an empty text has zero lines.
    pub fn new(text: &str) -> LineIndex {
        // `\n` is one byte that is never part of a longer character, so
        // the lines of the bytes are those of the text; `memchr_iter`
        // finds them with vector instructions (`str::match_indices` was
        // 1% of a cold build's instructions, on three line indexes a file).
        LineIndex::of_bytes(text.as_bytes())
    }

    /// [`new`](Self::new) over bytes that need not be UTF-8 (the same
    /// rule: a line ends after each `\n`; a final line without one is a line).
    pub fn of_bytes(bytes: &[u8]) -> LineIndex {
        LineIndex::of_bytes_in(bytes, Vec::new())
    }

    /// [`of_bytes`](Self::of_bytes) written into `starts` (emptied first),
    /// whose allocation it keeps.
    fn of_bytes_in(bytes: &[u8], mut starts: Vec<usize>) -> LineIndex {
        starts.clear();
        starts.reserve(bytes.len() / 32 + 1);
        if !bytes.is_empty() {
            starts.push(0);
        }
        starts.extend(
            memchr::memchr_iter(b'\n', bytes)
                .map(|i| i + 1)
                .filter(|&next| next < bytes.len()),
        );
        LineIndex {
            starts,
            len: bytes.len(),
        }
    }

    /// Calls `f` with the line index of `text`, built in a buffer the
    /// thread keeps from file to file (up to [`LINE_STARTS_KEPT`] bytes:
    /// one huge file does not pin its index's memory).
    ///
    /// An index build makes one line index per file; a fresh one was a
    /// large allocation of cold memory per file (and its growth on files
    /// of short lines), where the thread's last one is warm (issue 29).
    pub(crate) fn with_reused<R>(text: &str, f: impl FnOnce(&LineIndex) -> R) -> R {
        thread_local! {
            static SPARE: std::cell::Cell<Vec<usize>> = const { std::cell::Cell::new(Vec::new()) };
        }
        // A nested call finds the spare taken and starts from nothing.
        let lines = LineIndex::of_bytes_in(text.as_bytes(), SPARE.take());
        let out = f(&lines);
        let starts = lines.starts;
        if starts.capacity() * std::mem::size_of::<usize>() <= LINE_STARTS_KEPT {
            SPARE.set(starts);
        }
        out
    }

    /// Number of lines.
    pub fn line_count(&self) -> u32 {
        u32::try_from(self.starts.len()).unwrap_or(u32::MAX)
    }

    /// Byte range of lines `start..=end` (1-based), including the terminating
    /// newline of `end`; `None` when out of range.
    pub fn byte_range(&self, start: u32, end: u32) -> Option<std::ops::Range<usize>> {
        if start == 0 || start > end || end > self.line_count() {
            return None;
        }
        let a = self.starts[(start - 1) as usize];
        let b = self.starts.get(end as usize).copied().unwrap_or(self.len);
        Some(a..b)
    }

    /// The text of lines `start..=end`, or `None` when out of range.
    pub fn slice<'t>(&self, text: &'t str, start: u32, end: u32) -> Option<&'t str> {
        self.byte_range(start, end).and_then(|r| text.get(r))
    }
}

/// Chunk one file. Never fails: a grammar that cannot parse the file (or
/// panics) degrades to line windows for that file only.
pub fn chunk_file(rel_path: &str, language: Language, text: &str) -> Vec<Chunk> {
    chunk_file_in(rel_path, language, text, &LineIndex::new(text))
}

/// [`chunk_file`] with the line index of `text` already built (an index
/// build reuses it for the records and the embeddings of the same text).
pub fn chunk_file_in(
    rel_path: &str,
    language: Language,
    text: &str,
    lines: &LineIndex,
) -> Vec<Chunk> {
    if lines.line_count() == 0 {
        return Vec::new();
    }
    let sep = language.scope_separator();
    let fit = |chunks| fit::fit_chunks(chunks, text, lines, sep);
    match language {
        Language::Markdown => fit(markdown::chunk_markdown(rel_path, text, lines)),
        Language::Text => fit(markdown::chunk_text(rel_path, text, lines)),
        Language::Other => fit(window::windows(
            text,
            lines,
            1,
            lines.line_count(),
            ChunkKind::Snippet,
        )),
        code_lang => {
            // catch_unwind: a grammar bug must cost one file's symbols, never the provider.
            let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                code::chunk_code(rel_path, code_lang, text, lines)
            }));
            match attempt {
                // Code chunks are fitted inside `chunk_code`, before edges are attached.
                Ok(Some(chunks)) => chunks,
                _ => fit(window::windows(
                    text,
                    lines,
                    1,
                    lines.line_count(),
                    ChunkKind::Snippet,
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_include_terminating_newlines() {
        let text = "a\nbb\nccc";
        let li = LineIndex::new(text);
        assert_eq!(li.line_count(), 3);
        assert_eq!(li.slice(text, 1, 2), Some("a\nbb\n"));
        assert_eq!(li.slice(text, 3, 3), Some("ccc"));
        assert_eq!(li.slice(text, 2, 4), None);
        assert_eq!(LineIndex::new("x\n").line_count(), 1);
        assert_eq!(LineIndex::new("").line_count(), 0);
    }

    /// Every line range of `a` is that of `b`, and no more lines.
    fn same_lines(a: &LineIndex, b: &LineIndex) {
        assert_eq!(a.line_count(), b.line_count());
        assert_eq!(a.len, b.len);
        for n in 1..=a.line_count() + 1 {
            assert_eq!(a.byte_range(n, n), b.byte_range(n, n), "line {n}");
        }
        assert_eq!(a.starts, b.starts);
    }

    /// The thread's reused line index is the fresh one on every text: a
    /// huge one (whose buffer is then not kept), a large one, a small one
    /// after it, an empty one and one without a final newline; and a
    /// nested call gets its own.
    #[test]
    fn reused_line_indexes_are_fresh_ones() {
        let huge = "ab\n".repeat(LINE_STARTS_KEPT);
        let large = "a line of text\n".repeat(5_000);
        let texts = [huge.as_str(), &large, "x\ny\n", "", "one\ntwo", "\n\n\n"];
        for text in texts {
            LineIndex::with_reused(text, |lines| {
                same_lines(lines, &LineIndex::new(text));
                LineIndex::with_reused("inner\ntext\n", |inner| {
                    same_lines(inner, &LineIndex::new("inner\ntext\n"));
                });
                same_lines(lines, &LineIndex::new(text));
            });
        }
        LineIndex::with_reused(&huge, |_| ());
        let kept = LineIndex::with_reused("", |lines| lines.starts.capacity());
        assert!(kept * std::mem::size_of::<usize>() <= LINE_STARTS_KEPT);
    }
}
