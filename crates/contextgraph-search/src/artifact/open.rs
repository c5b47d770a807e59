//! Serving a checkout from an artifact, read-only ([`Workspace::open_artifact`]).
//!
//! The workspace opened here has no store: nothing is written anywhere,
//! ever (no cache directory, no lock, no vectors file; `prepare_semantic`
//! finds the vectors complete and has nowhere to write them). It is never
//! refreshed either: a replica answers from the index its artifact holds,
//! and files of the checkout that differ from it are found by
//! [`Workspace::drift`] and reported, not re-indexed. Their stale chunks
//! are still never served, because every frame is checked against its
//! file's bytes as it is built.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use super::commit::{head_commit, Commit};
use super::error::ArtifactError;
use super::format::{read_artifact, Manifest, INDEX_MEMBER, VECTORS_MEMBER};
use crate::codec::Reader;
use crate::index::{Backing, Index};
use crate::options::{CacheLocation, WorkspaceOptions};
use crate::store::{FORMAT_VERSION, SNAPSHOT_MAGIC};
use crate::workspace::{Shared, Workspace};

/// What a read-only workspace was opened from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ArtifactInfo {
    /// The artifact's id (hex SHA-256 of its manifest).
    pub id: String,
    /// Its manifest.
    pub manifest: Manifest,
}

impl ArtifactInfo {
    /// The commit the artifact describes (and the checkout is at).
    pub fn commit(&self) -> &Commit {
        &self.manifest.commit
    }
}

impl Workspace {
    /// Open the checkout at `root` read-only from the artifact at
    /// `artifact`: the artifact is checked whole (see
    /// [`read_artifact`]), `root` must be at the commit it describes, and
    /// the index and vectors inside are served as they are. `options`'
    /// cache location is ignored (there is none) and nothing is ever
    /// refreshed; see the module docs.
    pub fn open_artifact(
        root: impl AsRef<Path>,
        artifact: &Path,
        mut options: WorkspaceOptions,
    ) -> Result<(Workspace, ArtifactInfo), ArtifactError> {
        let given = root.as_ref();
        let root = std::fs::canonicalize(given).map_err(|source| ArtifactError::Root {
            path: given.to_path_buf(),
            source,
        })?;
        if !root.is_dir() {
            return Err(ArtifactError::Root {
                path: given.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        let mut file = read_artifact(artifact)?;
        let checkout = head_commit(&root)?;
        if !checkout.same_commit(&file.manifest.commit) {
            return Err(ArtifactError::CommitMismatch {
                path: artifact.to_path_buf(),
                dir: root,
                artifact: Box::new(file.manifest.commit.clone()),
                checkout: Box::new(checkout),
            });
        }
        let corrupt = |what: String| ArtifactError::Corrupt {
            path: artifact.to_path_buf(),
            what,
        };
        let snapshot = file
            .take_member(INDEX_MEMBER)
            .ok_or_else(|| corrupt("no index member".into()))?;
        let start = snapshot_start(&snapshot).map_err(corrupt)?;
        let index = Index::open(Arc::new(Backing::Owned(snapshot)), start)
            .ok_or_else(|| corrupt("its index does not decode".into()))?;
        if index.file_count() as u64 != file.manifest.files
            || index.chunk_count() as u64 != file.manifest.chunks
        {
            return Err(corrupt(format!(
                "its index holds {} files and {} chunks, its manifest says {} and {}",
                index.file_count(),
                index.chunk_count(),
                file.manifest.files,
                file.manifest.chunks
            )));
        }
        options.cache = CacheLocation::Disabled;
        options.build = None;
        let semantic = match file.take_member(VECTORS_MEMBER) {
            Some(bytes) if options.semantic => {
                Some(load_vectors(bytes, artifact, &file.manifest, &index)?)
            }
            _ => None,
        };
        let workspace = Workspace {
            shared: Arc::new(Shared {
                saved_layout: Mutex::new(None),
                root,
                options,
                index: RwLock::new(index),
                store: None,
                refresh_lock: Mutex::new(()),
                tree_load_tried: AtomicBool::new(true),
                tree: Mutex::new(None),
                loaded_binding: None,
                semantic: Mutex::new(semantic),
                proven: RwLock::new(crate::unchanged::Proven::default()),
                watch_trust: Mutex::new(None),
            }),
        };
        Ok((
            workspace,
            ArtifactInfo {
                id: file.id_hex(),
                manifest: file.manifest,
            },
        ))
    }
}

/// Where the snapshot's payload starts: after its store header (magic,
/// format, the directory it was built from, which a relocated checkout
/// does not share and which is therefore not compared).
fn snapshot_start(snapshot: &[u8]) -> Result<usize, String> {
    let mut r = Reader::new(snapshot);
    if r.take(8) != Some(&SNAPSHOT_MAGIC[..]) {
        return Err("its index member is not a snapshot".into());
    }
    match r.u32() {
        Some(FORMAT_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "its index member is in index format {v}, this cgp reads {FORMAT_VERSION}"
            ))
        }
        None => return Err("its index member is truncated".into()),
    }
    r.str()
        .ok_or_else(|| "its index member's header is truncated".to_owned())?;
    Ok(snapshot.len() - r.remaining())
}

/// The vectors member as the semantic signal's vectors, bound to `index`.
fn load_vectors(
    bytes: Vec<u8>,
    artifact: &Path,
    manifest: &Manifest,
    index: &Index,
) -> Result<crate::semantic::SemanticIndex, ArtifactError> {
    let model = contextgraph_embed::builtin().map_err(|e| ArtifactError::Model {
        path: artifact.to_path_buf(),
        detail: format!("cannot be used: the built-in model does not load ({e})"),
    })?;
    if manifest.model.as_deref() != Some(model.fingerprint()) {
        return Err(ArtifactError::Model {
            path: artifact.to_path_buf(),
            detail: "were made by another embedding model than this cgp's".into(),
        });
    }
    let aligned = crate::vectors_file::aligned_from(Backing::Owned(bytes), artifact, model)
        .map_err(|e| ArtifactError::Corrupt {
            path: artifact.to_path_buf(),
            what: format!("its vectors: {e}"),
        })?;
    let semantic = crate::semantic::SemanticIndex::from_saved(model, index, Some(aligned), None);
    if !semantic.is_mapped() {
        return Err(ArtifactError::Corrupt {
            path: artifact.to_path_buf(),
            what: "its vectors belong to another snapshot than its index".into(),
        });
    }
    Ok(semantic)
}
