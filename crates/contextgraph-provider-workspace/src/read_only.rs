//! A provider serving a checkout read-only from an index artifact
//! (`contextgraph_search::artifact`): no refresh, no watcher, no cache.

use std::path::Path;
use std::sync::Arc;

use contextgraph_search::artifact::{ArtifactError, ArtifactInfo};
use contextgraph_search::{Workspace, WorkspaceOptions};

use crate::{WorkspaceProvider, PROVIDER_NAME};

impl WorkspaceProvider {
    /// Open the checkout at `root` from the artifact at `artifact`,
    /// read-only (see [`Workspace::open_artifact`]): refused when the
    /// artifact is damaged or the checkout is at another commit. Queries
    /// are answered from the artifact's index as it is, never refreshed.
    pub fn open_artifact(
        root: impl AsRef<Path>,
        artifact: &Path,
        mut options: WorkspaceOptions,
    ) -> Result<(WorkspaceProvider, ArtifactInfo), ArtifactError> {
        options.progress_label = PROVIDER_NAME;
        let (workspace, info) = Workspace::open_artifact(root, artifact, options)?;
        Ok((
            WorkspaceProvider {
                workspace,
                fresh_within: None,
                file_reads: Arc::default(),
                file_chunkings: Arc::default(),
                decoded_budget: contextgraph_search::DECODED_RECORDS_BUDGET,
            },
            info,
        ))
    }
}
