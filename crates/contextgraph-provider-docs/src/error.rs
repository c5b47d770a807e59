//! Errors a person reads: each names the provider, what went wrong and what
//! to do next.

use std::io;
use std::path::PathBuf;

use crate::provider::PROVIDER_NAME;

/// Why the docs provider could not start or keep serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocsError {
    /// The folder could not be opened.
    #[error("{PROVIDER_NAME}: cannot open the docs folder {}: {source}; pass an existing, readable directory", path.display())]
    OpenRoot {
        /// The folder asked for.
        path: PathBuf,
        /// Why it could not be opened.
        source: io::Error,
    },
    /// The path is not a directory.
    #[error("{PROVIDER_NAME}: {} is not a directory; pass the folder whose documents should be served", path.display())]
    NotADirectory {
        /// The path asked for.
        path: PathBuf,
    },
    /// The stdio connection to the host failed while serving.
    #[error("{PROVIDER_NAME}: serving over stdio stopped: {source}")]
    Serve {
        /// What failed.
        source: contextgraph_provider_sdk::ServeError,
    },
}
