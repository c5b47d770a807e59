//! A Context Graph Protocol (CGP) provider over a local workspace directory.
//!
//! Finding text is the job of the search library (`contextgraph-search`,
//! re-exported here module by module): it walks the workspace under
//! git-style ignore rules (plus `.cgpignore`), skipping secrets, binaries,
//! minified and generated files; chunks code with tree-sitter into symbols,
//! Markdown and prose per heading section, and everything else into line
//! windows; ranks chunks by BM25 with a symbol-name boost, a path signal,
//! test code demoted, and personalised-PageRank proximity to the query's
//! anchors (G3, G4); and keeps the index in a cache directory, refreshed
//! incrementally by content hash.
//!
//! This crate turns those hits into frames: `symbol`, `doc` and `snippet`
//! frames whose `file` provenance digest covers exactly the addressed lines
//! as they are on disk at retrieval time (F5), compact outlines with a
//! resolvable `content_ref` (P2), budget packing, and `verify` judging
//! each held frame against its file as it is now, one look per file (the
//! index's digests where the file's stamp proves it unchanged, else its
//! bytes hashed; V1–V4); [`serve`] runs it over stdio.
//!
//! Entry point: [`WorkspaceProvider::open`], then serve it with
//! `contextgraph_provider_sdk::serve_stdio` (the `contextgraph-provider-workspace`
//! binary does exactly that).
//!
//! ```no_run
//! use contextgraph_provider_sdk::Provider;
//! use contextgraph_provider_workspace::{WorkspaceOptions, WorkspaceProvider};
//! use contextgraph_types::ContextQuery;
//!
//! let (provider, _source) = WorkspaceProvider::open(".", WorkspaceOptions::default())?;
//! let answer = provider.query(&ContextQuery::new("where is the retry loop", 8, 2000))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod provider;
mod read_only;
pub mod serve;
mod verify;

// The search library's modules, under the paths they had before the split.
pub use contextgraph_search::{
    artifact, chunk, graph, index, lang, progress, query_terms, rank, store, tokenize, uri, walk,
};

/// Internals for out-of-workspace benchmarks (`bench/tantivy-compare`): not
/// part of the API, may change without notice.
#[cfg(feature = "bench-internals")]
#[doc(hidden)]
pub use contextgraph_search::bench_internals;

pub use contextgraph_search::{
    BuildSnapshot, BuildStep, CacheLocation, Clock, IndexBuild, IndexSource, IndexStats, Language,
    RefreshReport, SkipReason, WalkOptions, WatchError, WatchHandle, WorkspaceOptions,
    PROJECT_IGNORE_FILE,
};
pub use provider::{WorkspaceError, WorkspaceProvider, PROVIDER_NAME, PROVIDER_VERSION};
