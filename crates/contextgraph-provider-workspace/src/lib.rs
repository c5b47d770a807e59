//! A Context Graph Protocol (CGP) provider over a local workspace directory.
//!
//! It walks the workspace under git-style ignore rules (plus `.cgpignore`),
//! skipping secrets, binaries, minified and generated files; chunks code with
//! tree-sitter into `symbol` frames (Rust, Python, JavaScript, TypeScript/TSX,
//! Go, Java, C, C++), Markdown and prose into `doc` frames per heading
//! section, and everything else into `snippet` line windows; ranks chunks by
//! BM25 (goal words with their indexed inflections) with a symbol-name boost,
//! a path signal, test code demoted, and personalised-PageRank proximity to
//! the query's anchors (G3, G4); and serves frames whose `file` provenance digest
//! covers exactly the addressed lines as they are on disk at retrieval time
//! (F5). `verify` re-hashes the current bytes (V1–V4). The index persists in
//! a cache directory ([`store`]) and is refreshed incrementally by content
//! hash.
//!
//! Entry point: [`WorkspaceProvider::open`], then serve it with
//! `contextgraph_provider::serve_stdio` (the `contextgraph-provider-workspace`
//! binary does exactly that).
//!
//! ```no_run
//! use contextgraph_provider::Provider;
//! use contextgraph_provider_workspace::{WorkspaceOptions, WorkspaceProvider};
//! use contextgraph_types::ContextQuery;
//!
//! let (provider, _source) = WorkspaceProvider::open(".", WorkspaceOptions::default())?;
//! let answer = provider.query(&ContextQuery::new("where is the retry loop", 8, 2000))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod chunk;
mod codec;
pub mod graph;
pub mod index;
pub mod lang;
mod provider;
pub mod query_terms;
pub mod rank;
pub mod serve;
pub mod store;
pub mod tokenize;
pub mod uri;
pub mod walk;

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

pub use lang::Language;
pub use provider::{
    CacheLocation, Clock, IndexSource, IndexStats, RefreshReport, WorkspaceError, WorkspaceOptions,
    WorkspaceProvider, PROVIDER_NAME, PROVIDER_VERSION,
};
pub use walk::{SkipReason, WalkOptions, PROJECT_IGNORE_FILE};
