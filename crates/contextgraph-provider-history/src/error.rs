//! [`HistoryError`]: why the history provider could not open a repository.

use std::path::PathBuf;

/// Why a history could not be opened or indexed. Every variant names the
/// repository (and the commit, where one is at fault) so that a person
/// reading the message knows where to look.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// No git repository at or above the directory.
    #[error("{}: no git repository at or above {path} ({message}); the history provider serves only a git working tree", crate::PROVIDER_NAME)]
    NotARepository {
        /// The directory given.
        path: PathBuf,
        /// What libgit2 said.
        message: String,
    },
    /// A bare repository: there is no working tree whose ignore rules could
    /// say which files' history may be served.
    #[error("{}: {path} is a bare repository; the history provider serves a working tree's history only", crate::PROVIDER_NAME)]
    Bare {
        /// The repository.
        path: PathBuf,
    },
    /// Reading the repository failed (a missing object, a corrupt ref).
    #[error("{}: repository {repository}: {what}: {message}", crate::PROVIDER_NAME)]
    Git {
        /// The repository's working directory.
        repository: PathBuf,
        /// What was being read, naming the commit when one is at fault.
        what: String,
        /// What libgit2 said.
        message: String,
    },
}

impl HistoryError {
    /// A libgit2 error while reading `what` in `repository`.
    pub(crate) fn git(
        repository: &std::path::Path,
        what: impl Into<String>,
        e: &git2::Error,
    ) -> Self {
        HistoryError::Git {
            repository: repository.to_path_buf(),
            what: what.into(),
            message: e.message().to_owned(),
        }
    }
}
