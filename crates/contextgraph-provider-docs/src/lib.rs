//! The docs provider: the Markdown and plain-text documents of a folder,
//! served as CGP `doc` frames, one per heading section.
//!
//! ```no_run
//! use contextgraph_provider_docs::{serve_dir, DocsConfig};
//!
//! // What `contextgraph-provider-docs ./docs` and `cgp serve docs ./docs` do:
//! serve_dir(DocsConfig::new("./docs"))?;
//! # Ok::<(), contextgraph_provider_docs::DocsError>(())
//! ```
//!
//! What a frame is made of, and why:
//! - **id** `<relative path>#<heading slug>[-n]` — stable across queries for
//!   the same heading, so hosts can dedup and `verify` can re-find it;
//! - **title** the heading text (the file name for text before the first
//!   heading; never empty, F2);
//! - **content** the section's exact bytes, unnormalised, so the
//!   **provenance** (`type: file`, the file's `file://` URI, `L<a>-<b>`) and
//!   its sha256 digest (F5) address exactly what is quoted, and the same
//!   digest is the **content_digest** (D1);
//! - **token_cost** `ceil(bytes / 4)` of the content (B3);
//! - **citation_label** `docs/retry.md § Retry policy (L1-20)` — what a person
//!   reads in a citation, with the line range to check it (F3);
//! - **recorded_at** the file's mtime (F4), which is also what `as_of` filters on;
//! - **score** BM25 of the query's match text against heading and body,
//!   heading matches weighted more, normalised by the best candidate (F1);
//! - **relations** `doc.documents` edges to files in the folder the section links to.
//!
//! The folder is walked at start-up and re-checked (length and mtime per
//! file) on every query, so edits show up without a restart; every bound is
//! in [`DocsConfig`]. Data flow: reads, no writes, no egress (`local-only`).
//!
//! Modules: [`sections`] (Markdown/RST sectioning, pure), [`score`]
//! (relevance, pure), [`ids`] (frame ids); the rest is the provider.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

use contextgraph_provider_sdk::ServeError;

mod config;
mod error;
pub mod ids;
mod index;
mod provider;
mod relations;
pub mod score;
pub mod sections;
mod walk;

pub use config::{
    DocsConfig, DEFAULT_MAX_DEPTH, DEFAULT_MAX_FILES, DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_TOTAL_BYTES, DEFAULT_MAX_VERIFY_IDENTITIES,
};
pub use error::DocsError;
pub use provider::{DocsProvider, PROVIDER_NAME};
pub use relations::DOCUMENTS;
pub use walk::{is_doc_file_name, ScanReport, DOC_EXTENSIONS};

/// Open `config.root` and serve it over this process's stdin/stdout until the
/// host sends `shutdown` or closes stdin. A host that closes stdout first is
/// a normal end too.
pub fn serve_dir(config: DocsConfig) -> Result<(), DocsError> {
    let provider = DocsProvider::open(config)?;
    match contextgraph_provider_sdk::serve_stdio(provider) {
        Ok(()) => Ok(()),
        // The host stopped reading: it is gone, and so is the reason to serve.
        Err(ServeError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(DocsError::Serve { source }),
    }
}
