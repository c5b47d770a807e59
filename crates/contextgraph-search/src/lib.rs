//! Finding text in a repository: the search library under the workspace
//! provider (`contextgraph-provider-workspace`), which turns its hits into
//! Context Graph Protocol frames.
//!
//! A [`Workspace`] walks a directory under git-style ignore rules (plus
//! `.cgpignore`, [`walk`]), skipping secrets, binaries, minified and generated
//! files; chunks code with tree-sitter into symbols (Rust, Python, JavaScript,
//! TypeScript/TSX, Go, Java, C, C++), Markdown and prose into heading
//! sections, and everything else into line windows ([`chunk`]); tokenises
//! them ([`tokenize`]) into an inverted index with a code graph of
//! definitions, calls and imports ([`index`], [`graph`]); and persists it in a
//! cache directory, refreshed incrementally by content hash ([`store`],
//! [`refresh`]). A search ([`SearchView::search`]) ranks chunks by BM25 over
//! the goal words and their indexed inflections ([`query_terms`]) with a
//! symbol-name boost, a path signal, test code demoted and personalised
//! PageRank proximity to the goal's anchors ([`rank`]).
//!
//! The library knows nothing of the protocol's frames, provenance or
//! transport: a hit is a chunk slot, a score and the [`index::ChunkRecord`]
//! it names (file, line range, digest of the indexed bytes).
//!
//! ```no_run
//! use contextgraph_search::{FileCache, SearchOptions, Workspace, WorkspaceOptions};
//!
//! let (workspace, _source) = Workspace::open(".", WorkspaceOptions::default())?;
//! workspace.refresh()?; // catch up with edits since the index was saved
//! let view = workspace.view();
//! let mut files = FileCache::default();
//! for hit in view.search("where is the retry loop", &SearchOptions::default(), &mut files) {
//!     if let Some((path, chunk)) = view.chunk(hit.slot) {
//!         println!("{path} L{}-{} {:.3}", chunk.start_line, chunk.end_line, hit.score);
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod artifact;
pub mod build_status;
pub mod chunk;
mod codec;
pub mod file_role;
mod format_version;
#[doc(hidden)]
pub mod fuzz;
pub mod graph;
pub mod index;
pub mod lang;
mod options;
pub mod progress;
pub mod query_terms;
pub mod rank;
pub mod refresh;
pub mod rerank;
mod same_content;
mod scan;
mod search;
pub mod semantic;
mod semantic_cold;
mod semantic_overlap;
mod semantic_rows;
mod semantic_workspace;
pub mod store;
pub mod term_counts;
mod term_substrings;
pub mod tokenize;
mod tree;
mod unchanged;
pub mod uri;
pub mod vectors_file;
pub mod walk;
mod watch;
pub mod watch_trust;
mod workspace;

/// Internals for out-of-workspace benchmarks (`bench/tantivy-compare`): not
/// part of the API, may change without notice.
#[cfg(feature = "bench-internals")]
#[doc(hidden)]
pub mod bench_internals {
    use crate::chunk::{Chunk, LineIndex};

    /// The text a chunk is indexed by (BM25): its lines minus those of nested
    /// chunks, plus its qualified name and title — exactly what
    /// [`build_chunk_records`](crate::index::build_chunk_records) tokenises.
    pub fn chunk_own_text(text: &str, lines: &LineIndex, chunk: &Chunk) -> String {
        crate::index::own_text(text, lines, chunk)
    }
}

pub use build_status::{BuildSnapshot, IndexBuild, Step as BuildStep};
pub use lang::Language;
pub use options::{
    semantic_switch, CacheLocation, Clock, WorkspaceOptions, DEFAULT_SEMANTIC_MAX_CHUNKS,
    SEMANTIC_VAR,
};
pub use rank::Ranked;
pub use refresh::RefreshReport;
pub use search::{FileCache, SearchOptions, SearchView, RELEVANCE_FLOOR};
pub use walk::{SkipReason, WalkOptions, PROJECT_IGNORE_FILE};
pub use watch::{WatchError, WatchHandle};
pub use workspace::{IndexError, IndexSource, IndexStats, Workspace, DECODED_RECORDS_BUDGET};
