//! [`Workspace`]: one directory's index, opened from the cache or built,
//! shared between threads, refreshed in place (see [`crate::refresh`]) and
//! read through a [`SearchView`](crate::SearchView).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use crate::index::Index;
use crate::options::{CacheLocation, WorkspaceOptions};
use crate::store::{cache_dir_for, default_cache_base, Binding, Store, StoreError};
use crate::tree::Tree;

/// Why a workspace could not be opened or its index persisted.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The root is not a readable directory.
    #[error("workspace {path} is not a readable directory ({source}); pass an existing directory")]
    Root {
        /// The path given.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The index could not be written (queries still work from memory).
    #[error("{0}; check the cache directory is writable or disable the cache")]
    Store(#[from] StoreError),
}

/// Where the index served after [`Workspace::open`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexSource {
    /// Loaded from the persistent index (call [`Workspace::refresh`] to catch up).
    Loaded,
    /// Built from scratch (no index existed, or persistence is disabled).
    Built,
    /// Built from scratch because the stored index was not trusted.
    Rebuilt {
        /// What was wrong with it.
        reason: String,
    },
}

/// Index statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStats {
    /// Files known (indexed or content-gated).
    pub files: usize,
    /// Live chunks.
    pub chunks: usize,
    /// Bytes of the persistent index on disk (0 when disabled).
    pub bytes_on_disk: u64,
    /// The cache directory, when persistence is on.
    pub cache_dir: Option<PathBuf>,
}

pub(crate) struct Shared {
    pub(crate) root: PathBuf,
    pub(crate) options: WorkspaceOptions,
    pub(crate) index: RwLock<Index>,
    pub(crate) store: Option<Store>,
    pub(crate) refresh_lock: Mutex<()>,
    /// What the freshness check remembers of the files (see [`crate::tree`]);
    /// `None` until the first refresh loads or builds it.
    pub(crate) tree: Mutex<Option<Tree>>,
    /// Whether the saved tree was already looked for (once per process).
    pub(crate) tree_load_tried: AtomicBool,
    /// The identity of the index files loaded at open, which a saved tree
    /// must name to be trusted.
    pub(crate) loaded_binding: Option<Binding>,
    /// Chunk vectors for the semantic signal, built on first use and
    /// brought up to date (by content digest) before each scoring.
    pub(crate) semantic: Mutex<Option<crate::semantic::SemanticIndex>>,
    /// Which of the index's slots the snapshot on disk holds, so the
    /// vectors can be written in its slot order (`semantic_workspace.rs`).
    pub(crate) saved_layout: Mutex<Option<crate::semantic_workspace::SavedLayout>>,
    /// The files whose indexed bytes their metadata proves unchanged (see
    /// [`crate::unchanged`]); empty until the first refresh.
    pub(crate) proven: RwLock<crate::unchanged::Proven>,
    /// What the running file watcher has said, while one runs (see
    /// [`crate::watch_trust`]): whether an answer may skip the scan.
    pub(crate) watch_trust: Mutex<Option<Arc<crate::watch_trust::WatchTrust>>>,
}

/// The search index of one workspace directory. Cheap to clone (shared
/// state): queries read it while a refresh builds the next version.
#[derive(Clone)]
pub struct Workspace {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.shared.root)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// Open the workspace at `root`: load the persistent index when it is
    /// trustworthy (answering immediately from it; call
    /// [`refresh`](Self::refresh) to catch up with the files), else build it
    /// from the files and persist it.
    pub fn open(
        root: impl AsRef<Path>,
        options: WorkspaceOptions,
    ) -> Result<(Workspace, IndexSource), IndexError> {
        let given = root.as_ref();
        let root = std::fs::canonicalize(given).map_err(|source| IndexError::Root {
            path: given.to_path_buf(),
            source,
        })?;
        if !root.is_dir() {
            return Err(IndexError::Root {
                path: given.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        let store = match &options.cache {
            CacheLocation::Disabled => None,
            CacheLocation::Base(base) => Some(Store::new(cache_dir_for(base, &root), &root)),
            CacheLocation::Default => {
                default_cache_base().map(|b| Store::new(cache_dir_for(&b, &root), &root))
            }
        };
        let mut source = IndexSource::Built;
        let mut index = Index::default();
        let mut loaded_binding = None;
        let mut saved_tree = None;
        if let Some(s) = &store {
            // Taken before the read: a write racing the load then shows as
            // a mismatch (a full walk), never as a tree newer than the index.
            let binding = s.binding();
            // The saved tree (what the first refresh's check compares the
            // files with) is read and decoded on its own thread while the
            // index is mapped and checksummed: two independent reads that
            // were one after the other on every warm start. It is the tree
            // the first refresh would load (the same binding), kept only
            // when the index loads.
            let (loaded, tree) = std::thread::scope(|scope| {
                let tree = std::thread::Builder::new()
                    .name("cgp-tree-load".into())
                    .spawn_scoped(scope, || s.load_tree(&binding));
                let loaded = s.load_index();
                let tree = match tree {
                    Ok(handle) => handle.join().ok().flatten(),
                    Err(_) => s.load_tree(&binding),
                };
                (loaded, tree)
            });
            match loaded {
                Ok(Some((loaded, _))) => {
                    index = loaded;
                    source = IndexSource::Loaded;
                    loaded_binding = Some(binding);
                    saved_tree = tree;
                }
                Ok(None) => {}
                // Not rebuilt there: writing into another user's directory
                // is what the refusal is for (N6).
                Err(e @ StoreError::ForeignCache { .. }) => return Err(e.into()),
                Err(e) => {
                    source = IndexSource::Rebuilt {
                        reason: e.to_string(),
                    };
                }
            }
        }
        let saved_layout = if source == IndexSource::Loaded {
            crate::semantic_workspace::SavedLayout::loaded(&index)
        } else {
            None
        };
        let workspace = Workspace {
            shared: Arc::new(Shared {
                saved_layout: Mutex::new(saved_layout),
                root,
                options,
                index: RwLock::new(index),
                store,
                refresh_lock: Mutex::new(()),
                // Looked for above when the index was loaded (once per
                // process, as the first refresh would have).
                tree_load_tried: AtomicBool::new(loaded_binding.is_some()),
                tree: Mutex::new(saved_tree),
                loaded_binding,
                semantic: Mutex::new(None),
                proven: RwLock::new(crate::unchanged::Proven::default()),
                watch_trust: Mutex::new(None),
            }),
        };
        if source != IndexSource::Loaded {
            workspace.refresh_inner(true, None, false)?;
        }
        // With the semantic signal on, chunk vectors are loaded or computed
        // now, at index time (`semantic.rs`); a failure leaves the signal to
        // retry on the first query.
        // A cancelled build (its client is gone) does not go on to embed.
        let build = workspace.shared.options.build.as_ref();
        if !build.is_some_and(|b| b.is_cancelled()) {
            if let Some(b) = build {
                b.step(crate::build_status::Step::Embedding);
            }
            let _ = workspace.prepare_semantic();
        }
        Ok((workspace, source))
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// Index statistics.
    pub fn stats(&self) -> IndexStats {
        let index = self.read_index();
        IndexStats {
            files: index.file_count(),
            chunks: index.chunk_count(),
            bytes_on_disk: self.shared.store.as_ref().map_or(0, Store::size_on_disk),
            cache_dir: self.shared.store.as_ref().map(|s| s.dir().to_path_buf()),
        }
    }

    pub(crate) fn read_index(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        // A panic while holding the lock leaves a consistent index (updates
        // are applied whole), so poisoning is not a reason to stop serving.
        self.shared.index.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The options this workspace was opened with.
    pub fn options(&self) -> &WorkspaceOptions {
        &self.shared.options
    }

    /// Forget the chunk records kept decoded for earlier queries once more
    /// than `budget` are (see `Index::forget_decoded`); returns whether
    /// it did. A long-running server calls this after each answer, so that
    /// its memory is bounded by the budget rather than by the whole index
    /// decoded (its goals come from a peer). Below the budget this reads a
    /// counter; past it, it waits for the answers in flight (a write lock)
    /// and frees the records, which later queries decode again.
    pub fn bound_decoded_records(&self, budget: usize) -> bool {
        if self.read_index().decoded_records() <= budget {
            return false;
        }
        let mut index = self.shared.index.write().unwrap_or_else(|p| p.into_inner());
        if index.decoded_records() <= budget {
            return false;
        }
        index.forget_decoded();
        true
    }
}

/// How many decoded chunk records a long-running server keeps for later
/// queries before it forgets them ([`Workspace::bound_decoded_records`]).
/// A tree of fewer chunks never reaches it. On a 16k-file tree (548,547
/// chunks) answering 300 distinct goals, the server's peak anonymous
/// memory was 209–252 MB with it against 346–365 MB without, and the
/// goals' p50 9.4–10.4 ms against 9.0–9.2 ms (records decoded again).
pub const DECODED_RECORDS_BUDGET: usize = 100_000;
