//! The persisted history index: one file beside the workspace index.
//!
//! `<workspace cache dir>/history.idx` (the directory the workspace index
//! of the same root uses, see `contextgraph_search::store`): the binary
//! stored index of [`crate::index_file`] — the working tree it describes,
//! the head it was built at, the commit records newest first, and the
//! postings and lookups built from them, checksummed. A file of another
//! format or another working tree, or one that does not decode, is not
//! trusted: the index is rebuilt from the repository. Writes go to a
//! temporary file renamed over the old one, so a crash leaves the old index
//! or the new (and a torn file fails its checksum).
//!
//! Older versions wrote `history.json` (records only, [`LEGACY_FORMAT`]):
//! when there is no `history.idx`, it is read as the starting point of the
//! build, the binary index is written, and the JSON file is removed.
//!
//! The records are served (subjects, bodies, paths), so the directory is
//! held to the workspace index's rule (N6, `check_cache_dir`): owned by this
//! user, not writable by others, not a symlink; otherwise the file is
//! neither read nor written. A directory it creates is private (0700).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use contextgraph_search::store::check_cache_dir;

use crate::index_file::{self, IndexFileError, MAX_FILE_BYTES};
use crate::record::CommitRecord;
use crate::search::Searchable;

/// The format of the legacy `history.json` read for migration.
pub const LEGACY_FORMAT: u32 = 1;

/// The file name inside the cache directory.
pub const FILE_NAME: &str = "history.idx";

/// The file older versions wrote (records only, JSON).
pub const LEGACY_FILE_NAME: &str = "history.json";

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

/// What [`Store::load`] found.
#[derive(Debug)]
pub enum Stored {
    /// The binary index, ready to rank.
    Index(Searchable),
    /// Only a legacy `history.json`: its records, to bring up to date and
    /// save in the binary format.
    Legacy(Snapshot),
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

    /// The legacy JSON file beside [`file`](Self::file).
    pub fn legacy_file(&self) -> PathBuf {
        self.file.with_file_name(LEGACY_FILE_NAME)
    }

    /// The stored index, when there is one: `Ok(None)` when there is no
    /// file; an error (say it, then rebuild) when there is one that this
    /// working tree cannot trust or that does not decode.
    pub fn load(&self) -> Result<Option<Stored>, IndexFileError> {
        if let Some(dir) = self.file.parent() {
            if !dir.exists() {
                return Ok(None);
            }
            check_cache_dir(dir).map_err(|e| IndexFileError::Untrusted {
                file: self.file.clone(),
                message: e.to_string(),
            })?;
        }
        let io = |e: std::io::Error| IndexFileError::Io {
            file: self.file.clone(),
            message: e.to_string(),
        };
        let bytes = match read_bounded(&self.file) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(self.load_legacy().map(Stored::Legacy))
            }
            Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                return Err(IndexFileError::TooLarge {
                    file: self.file.clone(),
                    bytes: std::fs::metadata(&self.file).map_or(0, |m| m.len()),
                })
            }
            Err(e) => return Err(io(e)),
        };
        index_file::decode(&bytes, &self.file, &self.root).map(|i| Some(Stored::Index(i)))
    }

    /// The records of a legacy `history.json` of this working tree, when
    /// there is one that parses (anything else is simply rebuilt: the file
    /// is removed once the binary index is written).
    fn load_legacy(&self) -> Option<Snapshot> {
        let bytes = read_bounded(&self.legacy_file()).ok()?;
        let on_disk: OnDisk = serde_json::from_slice(&bytes).ok()?;
        (on_disk.format == LEGACY_FORMAT && on_disk.root == self.root).then_some(on_disk.snapshot)
    }

    /// Persist `index` (atomically: a temporary file renamed over), and
    /// remove a legacy `history.json` it replaces.
    pub fn save(&self, index: &Searchable) -> std::io::Result<()> {
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
        let bytes = index_file::encode(index, &self.root);
        let tmp = self
            .file
            .with_extension(format!("idx.tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &self.file)?;
        match std::fs::remove_file(self.legacy_file()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// The bytes of `file`, refused (`FileTooLarge`) above [`MAX_FILE_BYTES`]
/// before anything is read: the size is a fact of the file, not a length
/// it claims, but a huge one is still not loaded into memory.
fn read_bounded(file: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(file)?;
    let len = f.metadata()?.len();
    if len > MAX_FILE_BYTES {
        return Err(std::io::ErrorKind::FileTooLarge.into());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // `take`: a file that grows while it is read stops at the bound too.
    f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::ErrorKind::FileTooLarge.into());
    }
    Ok(bytes)
}
