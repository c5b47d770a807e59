//! The persisted history index: one file beside the workspace index.
//!
//! `<workspace cache dir>/history.json` (the directory the workspace index
//! of the same root uses, see `contextgraph_search::store`), holding a
//! format number, the working tree it describes, the head it was built at
//! and the commit records, newest first. A file of another format or
//! another working tree, or one that does not parse, is not trusted: the
//! index is rebuilt from the repository. Writes go to a temporary file
//! renamed over the old one, so a crash leaves the old index or the new.
//!
//! The records are served (subjects, bodies, paths), so the directory is
//! held to the workspace index's rule (N6, `check_cache_dir`): owned by this
//! user, not writable by others, not a symlink; otherwise the file is
//! neither read nor written. A directory it creates is private (0700).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use contextgraph_search::store::check_cache_dir;

use crate::record::CommitRecord;

/// The format written; any other is rebuilt.
pub const FORMAT: u32 = 1;

/// The file name inside the cache directory.
pub const FILE_NAME: &str = "history.json";

/// What the index holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The commit `HEAD` named when the index was built.
    pub head: String,
    /// Older history was left out (the cap on indexed commits).
    pub truncated: bool,
    /// The repository is a shallow clone.
    pub shallow: bool,
    /// Commits that could not be read (missing objects).
    pub unreadable: u64,
    /// The commits, newest first.
    pub commits: Vec<CommitRecord>,
}

#[derive(Deserialize)]
struct OnDisk {
    format: u32,
    root: String,
    #[serde(flatten)]
    snapshot: Snapshot,
}

/// [`OnDisk`] borrowed, for writing without copying the records.
#[derive(Serialize)]
struct OnDiskRef<'a> {
    format: u32,
    root: &'a str,
    #[serde(flatten)]
    snapshot: &'a Snapshot,
}

/// Where one working tree's history index is kept.
#[derive(Debug, Clone)]
pub struct Store {
    file: PathBuf,
    root: String,
}

impl Store {
    /// The store for the working tree at `root` in cache directory `dir`.
    pub fn new(dir: &Path, root: &Path) -> Store {
        Store {
            file: dir.join(FILE_NAME),
            root: root.to_string_lossy().into_owned(),
        }
    }

    /// The index file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The stored index, when there is one this working tree can trust.
    pub fn load(&self) -> Option<Snapshot> {
        self.file
            .parent()
            .is_none_or(|d| check_cache_dir(d).is_ok())
            .then_some(())?;
        let bytes = std::fs::read(&self.file).ok()?;
        let on_disk: OnDisk = serde_json::from_slice(&bytes).ok()?;
        (on_disk.format == FORMAT && on_disk.root == self.root).then_some(on_disk.snapshot)
    }

    /// Persist `snapshot` (atomically: a temporary file renamed over).
    pub fn save(&self, snapshot: &Snapshot) -> std::io::Result<()> {
        if let Some(dir) = self.file.parent() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir)?;
            check_cache_dir(dir).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::PermissionDenied, e.to_string())
            })?;
        }
        let on_disk = OnDiskRef {
            format: FORMAT,
            root: &self.root,
            snapshot,
        };
        let bytes = serde_json::to_vec(&on_disk).map_err(std::io::Error::other)?;
        let tmp = self
            .file
            .with_extension(format!("json.tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &self.file)
    }
}
