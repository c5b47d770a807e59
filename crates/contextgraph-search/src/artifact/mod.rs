//! Index artifacts: an index built once (in CI, at a commit) and served by
//! replicas that never index.
//!
//! An artifact is one relocatable file ([`format`](mod@format)): a versioned header, a
//! manifest checksummed by SHA-256 (whose digest is the artifact's id) and
//! members, each with its own SHA-256: the saved index (a snapshot in the
//! store's format, its journal folded in) and, with the semantic signal,
//! the chunk vectors aligned to it. The manifest records the commit of the
//! checkout ([`commit`]: read from `.git`, no `git` needed; "no commit" for
//! a plain directory). Every path inside is relative to the checkout, so
//! the artifact serves the same commit checked out anywhere.
//!
//! [`crate::Workspace::write_artifact`] writes one ([`build`]);
//! [`read_artifact`] checks one whole (magic, versions, every length
//! against the file size, every checksum) and [`verify_artifact`] adds the
//! checkout's commit; [`crate::Workspace::open_artifact`] serves one read-only
//! ([`open`]: no store, no refresh, nothing written) and
//! [`crate::Workspace::drift`] says which files of the checkout differ from it
//! ([`drift`]). A damaged or mismatched artifact is refused with an
//! [`ArtifactError`] that names the file and what to do; it is never served.

pub mod build;
pub mod commit;
pub mod drift;
pub mod error;
pub mod format;
pub mod open;

use std::path::Path;

pub use build::ArtifactSummary;
pub use commit::{head_commit, Commit, CommitError};
pub use drift::Drift;
pub use error::ArtifactError;
pub use format::{read_artifact, ArtifactFile, Manifest, Member, ARTIFACT_VERSION};
pub use open::ArtifactInfo;

/// Check the artifact at `path` whole (see [`read_artifact`]) and, with
/// `checkout`, that the checkout is at the commit it describes. Returns
/// what it read.
pub fn verify_artifact(
    path: &Path,
    checkout: Option<&Path>,
) -> Result<ArtifactFile, ArtifactError> {
    let file = read_artifact(path)?;
    if let Some(dir) = checkout {
        if let Err(source) = std::fs::read_dir(dir) {
            return Err(ArtifactError::Root {
                path: dir.to_path_buf(),
                source,
            });
        }
        let at = head_commit(dir)?;
        if !at.same_commit(&file.manifest.commit) {
            return Err(ArtifactError::CommitMismatch {
                path: path.to_path_buf(),
                dir: dir.to_path_buf(),
                artifact: Box::new(file.manifest.commit.clone()),
                checkout: Box::new(at),
            });
        }
    }
    Ok(file)
}
