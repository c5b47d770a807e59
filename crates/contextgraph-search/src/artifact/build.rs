//! Writing a workspace's index as an artifact ([`Workspace::write_artifact`]).
//!
//! The artifact holds a fresh snapshot of the index as it is in memory
//! (the journal folded in, slots numbered `0..` in live order) and, with
//! the semantic signal in use, the chunk vectors in that same order: what
//! a replica loads as a warm process loads its cache, with nothing to
//! replay and nothing to embed. The snapshot and the vectors are encoded
//! by the store's own writers ([`Store::write_index`],
//! [`crate::vectors_file::write_aligned`]) into a private staging
//! directory beside the output, read back, and removed.

use std::path::{Path, PathBuf};

use super::commit::head_commit;
use super::error::ArtifactError;
use super::format::{write_artifact, Manifest, INDEX_MEMBER, VECTORS_MEMBER};
use crate::store::{Store, FORMAT_VERSION};
use crate::vectors_file::{RowRef, VECTORS_FILE};
use crate::workspace::Workspace;

/// What [`Workspace::write_artifact`] wrote.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ArtifactSummary {
    /// The artifact's id (hex SHA-256 of its manifest).
    pub id: String,
    /// What the manifest says.
    pub manifest: Manifest,
    /// The file's size in bytes.
    pub bytes: u64,
}

impl Workspace {
    /// Write this workspace's index, as it is now, as an artifact at `out`
    /// (see [`crate::artifact`]); `created_by` names the writer (`cgp
    /// 0.1.0`). Call [`refresh`](Self::refresh) first for an index that
    /// matches the files. The commit recorded is the checkout's `HEAD`,
    /// read from `.git` (none for a plain directory).
    pub fn write_artifact(
        &self,
        out: &Path,
        created_by: &str,
    ) -> Result<ArtifactSummary, ArtifactError> {
        let commit = head_commit(self.root())?;
        if self.semantic_in_use() {
            // The vectors brought in line with the index (a warm cache's are
            // mapped; a cold build's were embedded at open).
            if let Err(crate::semantic_workspace::SemanticError::Model(e)) = self.prepare_semantic()
            {
                return Err(ArtifactError::Model {
                    path: out.to_path_buf(),
                    detail: format!("cannot be computed: {e}"),
                });
            }
        }
        let staging = Staging::new(out)?;
        // Lock order as `prepare_semantic`'s: the vectors, then the index.
        let semantic = self
            .shared
            .semantic
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let index = self.read_index();
        let store = Store::new(staging.dir.clone(), self.root());
        let snapshot_id = store.write_index(&index)?;
        let io = |path: PathBuf| move |source| ArtifactError::Io { path, source };
        let snapshot_path = staging.dir.join("index.bin");
        let snapshot = std::fs::read(&snapshot_path).map_err(io(snapshot_path.clone()))?;
        let mut model = None;
        let mut vectors = None;
        if let Some(semantic) = semantic
            .as_ref()
            .filter(|s| self.semantic_in_use() && s.layout() == Some(index.layout_id()))
        {
            const NONE: [u8; 32] = [0; 32];
            // The snapshot just written numbers the live slots `0..` in
            // order (`index/snapshot.rs`): the rows go in that order.
            let rows: Vec<RowRef<'_>> = index
                .live_slot_numbers()
                .map(|s| semantic.row(s as usize).unwrap_or((0.0, &[], &NONE)))
                .collect();
            let path = staging.dir.join(VECTORS_FILE);
            crate::vectors_file::write_aligned(
                &path,
                semantic.dim(),
                semantic.fingerprint(),
                &snapshot_id,
                &rows,
            )
            .map_err(|e| ArtifactError::Corrupt {
                path: path.clone(),
                what: format!("the vectors could not be staged: {e}"),
            })?;
            vectors = Some(std::fs::read(&path).map_err(io(path.clone()))?);
            model = Some(semantic.fingerprint().to_owned());
        }
        let mut manifest = Manifest {
            index_format: FORMAT_VERSION,
            created_by: created_by.to_owned(),
            commit,
            built_from: self.root().to_string_lossy().into_owned(),
            files: index.file_count() as u64,
            chunks: index.chunk_count() as u64,
            model,
            members: Vec::new(),
        };
        drop(index);
        drop(semantic);
        let mut members: Vec<(&str, &[u8])> = vec![(INDEX_MEMBER, &snapshot)];
        if let Some(v) = &vectors {
            members.push((VECTORS_MEMBER, v));
        }
        let id = write_artifact(out, &mut manifest, &members)?;
        let bytes = std::fs::metadata(out).map_or(0, |m| m.len());
        Ok(ArtifactSummary {
            id: super::format::hex(&id),
            manifest,
            bytes,
        })
    }
}

/// A private directory beside the artifact for the store's writers,
/// removed when dropped (whatever happened).
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new(out: &Path) -> Result<Staging, ArtifactError> {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = parent.join(format!(
            ".cgp-artifact-staging-{}-{nanos:08x}",
            std::process::id()
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(|source| ArtifactError::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(Staging { dir })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
