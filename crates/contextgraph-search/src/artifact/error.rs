//! [`ArtifactError`]: why an index artifact was not built, not trusted or
//! not served. Every variant names the file and says what to do: a replica
//! that refuses its artifact is read by an operator, not a program.

use std::path::PathBuf;

use super::commit::{Commit, CommitError};

/// Why an index artifact could not be built, read or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// Reading or writing the file failed.
    #[error("index artifact {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file does not start like an index artifact.
    #[error("{} is not a cgp index artifact (bad magic); pass the file `cgp index build --out` wrote", path.display())]
    NotAnArtifact {
        /// The file.
        path: PathBuf,
    },
    /// Written in another artifact format, or around an index format this
    /// build does not read.
    #[error("index artifact {}: {what} {found}, this cgp reads {supported}; rebuild it with this cgp (`cgp index build`)", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// Which version (`artifact format`, `index format`).
        what: &'static str,
        /// The version found.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// Damaged: a checksum, a length or a field does not hold.
    #[error("index artifact {} is damaged ({what}); it is not served: copy it again, or rebuild it with `cgp index build`", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What does not hold.
        what: String,
    },
    /// The checkout is at another commit than the artifact describes.
    #[error("index artifact {} describes {artifact}, but {} is at {checkout}; check out the artifact's commit there, or build an artifact for this one", path.display(), dir.display())]
    CommitMismatch {
        /// The artifact.
        path: PathBuf,
        /// The checkout.
        dir: PathBuf,
        /// What the artifact describes (boxed, as the next: keeps every
        /// `Result<_, ArtifactError>` small).
        artifact: Box<Commit>,
        /// What the checkout is at.
        checkout: Box<Commit>,
    },
    /// The checkout's commit could not be read.
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// The artifact's vectors were made by another embedding model.
    #[error("index artifact {}: its chunk vectors {detail}; rebuild it with this cgp (`cgp index build`)", path.display())]
    Model {
        /// The artifact.
        path: PathBuf,
        /// What differs.
        detail: String,
    },
    /// The checkout is not a readable directory.
    #[error("checkout {} is not a readable directory ({source}); pass the directory the artifact was built from, at its commit", path.display())]
    Root {
        /// The directory given.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The workspace could not be indexed (building an artifact).
    #[error(transparent)]
    Index(#[from] crate::IndexError),
    /// The snapshot could not be staged (building an artifact).
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}
