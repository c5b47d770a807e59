//! The persistent index: a snapshot plus an append-only journal in a cache
//! directory keyed by the workspace path.
//!
//! # Location
//!
//! `<base>/<first 16 hex digits of sha256(canonical workspace path)>/`, where
//! `<base>` is, in order: the directory given in
//! [`WorkspaceOptions::cache_dir`](crate::WorkspaceOptions), the environment
//! variable [`CACHE_DIR_ENV`], `$XDG_CACHE_HOME/contextgraph/workspace`,
//! `$HOME/.cache/contextgraph/workspace`. The directory holds `index.bin`
//! (snapshot), `journal.bin` (changes since the snapshot) and `tree.bin`
//! (what the freshness check remembers of the files, see `tree.rs`:
//! a hint bound to the stamps of the other two, written after them, so it
//! is trusted only for the exact index it describes; the index format
//! itself is unchanged by it). With the semantic signal on, `vectors.bin`
//! and `vectors-tail.bin` hold the chunk vectors, bound to the snapshot by
//! its id (see `vectors_file.rs`).
//!
//! # Format and trust
//!
//! Both files start with a magic, the format version and the workspace path.
//! Format 5 (the snapshot) is laid out in checksummed sections (see
//! `index/frozen.rs`): a per-file table, per-slot lengths, the chunk
//! records, the term → postings table, the symbol and reverse-edge tables
//! and the slot → terms lists. A load maps the file, checks every section's
//! CRC-32 (at memory speed, no allocation) and decodes only the per-file
//! table and the slot lengths; the rest is read in place when a query or a
//! refresh touches it. The journal holds whole records (terms as strings),
//! replayed onto the loaded index, and names its snapshot by the SHA-256 of
//! the snapshot's section directory (which holds every section's length and
//! checksum). Formats 1 to 4 (decoded whole on every load) are detected by
//! their version and rebuilt.
//!
//! On load a wrong magic, another version, another workspace, a checksum
//! mismatch, a truncated file or entry, or any decoding error of what a load
//! decodes means the index is *not trusted*: the caller rebuilds from the
//! files. What is decoded later was checksummed at the load, and is
//! bounds-checked all the same (a malformed entry reads as absent, never as
//! a panic). Lengths read from disk are bounded by the bytes actually
//! present, so a corrupt length cannot make us allocate. Writes go to a
//! temporary file renamed into place, so a crash leaves the previous
//! snapshot intact, and a mapped snapshot is never written to: a process
//! serving from it keeps reading the file it opened (on Linux, the
//! replaced file's pages stay readable until it is unmapped).
//!
//! **Who may touch the cache (N6).** A shared `CONTEXTGRAPH_WORKSPACE_CACHE`
//! must not let another user plant a crafted index or make us overwrite a
//! file of ours through a symlink. So a cache directory another user owns
//! (or that others may write to) is refused with a clear error before any
//! read or write ([`StoreError::ForeignCache`]); directories are created
//! readable by the user only; and temporary files have unpredictable names
//! and are created exclusively (`O_CREAT|O_EXCL`, which never follows a
//! symlink), mode 0600.
//!
//! **A truncated mapped file (N10).** A mapping faults (SIGBUS) when another
//! process truncates the file in place, which no writer of ours does. A
//! snapshot up to [`MAP_THRESHOLD`] bytes is therefore read into memory
//! instead of mapped: truncation under a reader cannot hurt it. Larger
//! ones are mapped; `cgp` installs a SIGBUS handler that says what
//! happened before it exits.
//!
//! After a refresh, what changed is held in memory beside the mapped
//! snapshot (and appended to the journal); a snapshot write folds both into
//! a new file, which the next process maps.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use crate::codec::{Reader, Writer};
use crate::index::{sha256, Backing, FileRecord, Index};
use crate::tree::{Stamp, Tree};

/// Environment variable overriding the cache base directory.
pub const CACHE_DIR_ENV: &str = "CONTEXTGRAPH_WORKSPACE_CACHE";

pub use crate::format_version::FORMAT_VERSION;

pub(crate) const SNAPSHOT_MAGIC: &[u8; 8] = b"CGPWSIX\x01";
pub(crate) const JOURNAL_MAGIC: &[u8; 8] = b"CGPWSJR\x01";
const TREE_MAGIC: &[u8; 8] = b"CGPWSTR\x01";

/// The identity of the saved index files (snapshot and journal stamps):
/// a saved tree names the index it describes by it. Every write of ours
/// changes it (an append grows the journal, a snapshot is a new file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Binding([Option<Stamp>; 2]);

/// Largest saved file read into memory rather than mapped (N10): a copy
/// cannot fault when another process truncates the file.
pub const MAP_THRESHOLD: u64 = 32 * 1024 * 1024;

/// Why a stored index was not used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The cache directory belongs to another user, or others may write
    /// to it: an index found there could be planted (N6).
    #[error("workspace index cache {}: {why}; set CONTEXTGRAPH_WORKSPACE_CACHE to a directory of yours", path.display())]
    ForeignCache {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Reading or writing failed.
    #[error("workspace index at {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The content is not a trustworthy index (corrupt, truncated, another
    /// version or another workspace); it is rebuilt.
    #[error("workspace index at {path} is not usable ({why}); it will be rebuilt from the files")]
    Untrusted {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        why: String,
    },
}

/// The cache directory for `root` (canonical) under `base`.
pub fn cache_dir_for(base: &Path, root: &Path) -> PathBuf {
    let digest = sha256(root.as_os_str().as_encoded_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    base.join(hex)
}

/// The default cache base directory (see the module docs), if one can be found.
pub fn default_cache_base() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(xdg).join("contextgraph").join("workspace"));
    }
    std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| {
        PathBuf::from(h)
            .join(".cache")
            .join("contextgraph")
            .join("workspace")
    })
}

/// The workspace an entry of the cache directory indexes, as recorded in
/// the header of its journal or snapshot, with the format it was written
/// in; `None` when neither file starts with a header of ours (not an
/// index, or one too damaged to name its workspace). Reads at most the
/// first 64 KiB of one file, through no symlink: for `cgp cache list`.
pub fn recorded_workspace(entry: &Path) -> Option<(String, u32)> {
    use std::io::Read as _;
    const HEADER_LIMIT: u64 = 64 * 1024;
    ["journal.bin", "index.bin"].iter().find_map(|name| {
        let path = entry.join(name);
        if !fs::symlink_metadata(&path).ok()?.is_file() {
            return None;
        }
        let mut head = Vec::new();
        fs::File::open(&path)
            .ok()?
            .take(HEADER_LIMIT)
            .read_to_end(&mut head)
            .ok()?;
        let mut r = Reader::new(&head);
        let magic = r.take(8)?;
        if magic != &SNAPSHOT_MAGIC[..] && magic != &JOURNAL_MAGIC[..] {
            return None;
        }
        let version = r.u32()?;
        Some((r.str()?.to_owned(), version))
    })
}

/// A journal entry.
#[derive(Debug, Clone, PartialEq)]
pub enum JournalEntry {
    /// A file was indexed (or re-indexed).
    Upsert(FileRecord),
    /// A file is gone.
    Delete(String),
    /// A file's metadata changed, not its content: its new size and
    /// modification time (see [`Index::touch`]).
    Touch {
        /// The file.
        rel_path: String,
        /// Its size.
        size: u64,
        /// Its modification time, nanoseconds since the epoch.
        mtime_ns: Option<i128>,
    },
}

/// The on-disk index of one workspace.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    root: String,
}

impl Store {
    /// A store in `dir` for the workspace at `root`.
    pub fn new(dir: PathBuf, root: &Path) -> Store {
        Store {
            dir,
            root: root.to_string_lossy().into_owned(),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn snapshot_path(&self) -> PathBuf {
        self.dir.join("index.bin")
    }

    fn journal_path(&self) -> PathBuf {
        self.dir.join("journal.bin")
    }

    fn tree_path(&self) -> PathBuf {
        self.dir.join("tree.bin")
    }

    /// The identity of the index files as they are now.
    pub(crate) fn binding(&self) -> Binding {
        Binding([
            Stamp::at(&self.snapshot_path()),
            Stamp::at(&self.journal_path()),
        ])
    }

    /// Save the freshness check's tree (see [`crate::tree`]) for the index
    /// files as they are now; call after writing them.
    ///
    /// Not synced to disk: it is a hint checked by its digest, and a lost
    /// or torn one costs one full walk, not a wrong answer.
    pub(crate) fn write_tree(&self, tree: &Tree) -> Result<(), StoreError> {
        let mut payload = Writer::default();
        tree.encode(&mut payload);
        let mut head = self.header(TREE_MAGIC);
        for stamp in self.binding().0 {
            stamp_field(&mut head, stamp);
        }
        head.raw(&sha256(&payload.buf));
        let path = self.tree_path();
        self.check_owner()?;
        let write = || -> std::io::Result<()> {
            let (mut f, tmp) = create_temp(&path)?;
            let written = f
                .write_all(&head.buf)
                .and_then(|()| f.write_all(&payload.buf));
            drop(f);
            finish_temp(written, &tmp, &path)
        };
        write().map_err(|source| StoreError::Io {
            path: self.tree_path(),
            source,
        })
    }

    /// The saved tree, when there is one written for the index files
    /// `binding` names (the ones loaded) and it is intact; `None` otherwise
    /// (the next check walks in full).
    pub(crate) fn load_tree(&self, binding: &Binding) -> Option<Tree> {
        let bytes = fs::read(self.tree_path()).ok()?;
        let mut r = Reader::new(&bytes);
        self.read_header(&mut r, TREE_MAGIC).ok()?;
        let saved = Binding([read_stamp_field(&mut r)?, read_stamp_field(&mut r)?]);
        if saved != *binding {
            return None;
        }
        let digest = r.array32()?;
        let payload = r.rest();
        if sha256(payload) != digest {
            return None;
        }
        Tree::decode(&mut Reader::new(payload))
    }

    /// Remove the saved index (snapshot, journal, tree), found corrupt after
    /// its load: the next open builds it again. Best effort: a file that
    /// cannot be removed is refused again by the same checks.
    pub fn discard(&self) {
        for path in [self.tree_path(), self.journal_path(), self.snapshot_path()] {
            let _ = fs::remove_file(path);
        }
    }

    /// Bytes on disk (snapshot + journal).
    pub fn size_on_disk(&self) -> u64 {
        [self.snapshot_path(), self.journal_path()]
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Load the snapshot and replay the journal, as file records with their
    /// terms filled in. `Ok(None)` when there is no index yet;
    /// `Err(Untrusted)` when there is one that must not be used. Serving
    /// uses the faster [`load_index`](Self::load_index).
    pub fn load(&self) -> Result<Option<(Vec<FileRecord>, u64)>, StoreError> {
        Ok(self
            .load_index()?
            .map(|(index, n)| (index.records_with_terms(), n)))
    }

    /// Load the snapshot (one read, no per-term allocation) and replay the
    /// journal onto it. `Ok(None)` when there is no index yet;
    /// `Err(Untrusted)` when there is one that must not be used (another
    /// format version, another workspace, corrupt or truncated).
    pub fn load_index(&self) -> Result<Option<(Index, u64)>, StoreError> {
        let snap = self.snapshot_path();
        if !self.dir.exists() {
            return Ok(None);
        }
        self.check_owner()?;
        let file = match fs::File::open(&snap) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Io { path: snap, source }),
        };
        let untrusted = |path: &Path, why: &str| StoreError::Untrusted {
            path: path.to_path_buf(),
            why: why.to_owned(),
        };
        let bytes = map(&file).map_err(|source| StoreError::Io {
            path: snap.clone(),
            source,
        })?;
        let mut r = Reader::new(&bytes);
        self.read_header(&mut r, SNAPSHOT_MAGIC)
            .map_err(|why| untrusted(&snap, &why))?;
        let start = bytes.len() - r.remaining();
        let directory = bytes
            .get(start..start + crate::index::DIRECTORY_BYTES)
            .ok_or_else(|| untrusted(&snap, "truncated"))?;
        let snapshot_id = sha256(directory);
        let bytes = Arc::new(bytes);
        let mut index = Index::open(Arc::clone(&bytes), start).ok_or_else(|| {
            untrusted(
                &snap,
                "checksum mismatch or undecodable index (corrupt or truncated)",
            )
        })?;
        let journal = self.journal_path();
        let mut journal_entries = 0u64;
        match fs::read(&journal) {
            Ok(jb) => {
                let mut r = Reader::new(&jb);
                self.read_header(&mut r, JOURNAL_MAGIC)
                    .map_err(|why| untrusted(&journal, &why))?;
                if r.array32() != Some(snapshot_id) {
                    return Err(untrusted(&journal, "journal belongs to another snapshot"));
                }
                while !r.is_empty() {
                    let entry = r
                        .bytes()
                        .and_then(|b| {
                            let digest = r.array32()?;
                            (sha256(b) == digest).then_some(b)
                        })
                        .and_then(|b| read_entry(&mut Reader::new(b)))
                        .ok_or_else(|| untrusted(&journal, "corrupt entry"))?;
                    journal_entries += 1;
                    match entry {
                        JournalEntry::Upsert(rec) => index.upsert(rec),
                        JournalEntry::Delete(path) => {
                            index.remove(&path);
                        }
                        JournalEntry::Touch {
                            rel_path,
                            size,
                            mtime_ns,
                        } => {
                            index.touch(&rel_path, size, mtime_ns);
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(StoreError::Io {
                    path: journal,
                    source,
                })
            }
        }
        Ok(Some((index, journal_entries)))
    }

    /// Check magic, format version and workspace; the error says which.
    fn read_header(&self, r: &mut Reader<'_>, magic: &[u8; 8]) -> Result<(), String> {
        if r.take(8) != Some(&magic[..]) {
            return Err("not a workspace index file (bad magic)".into());
        }
        match r.u32() {
            Some(FORMAT_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "written in index format {v}, this build reads format {FORMAT_VERSION}"
                ))
            }
            None => return Err("truncated header".into()),
        }
        match r.str() {
            Some(root) if root == self.root => Ok(()),
            Some(_) => Err("index of another workspace".into()),
            None => Err("truncated header".into()),
        }
    }

    fn header(&self, magic: &[u8; 8]) -> Writer {
        let mut w = Writer::default();
        w.raw(magic);
        w.u32(FORMAT_VERSION);
        w.str(&self.root);
        w
    }

    /// Write a fresh snapshot of `records` (with their terms filled, as
    /// built by [`build_chunk_records`](crate::index::build_chunk_records))
    /// and start an empty journal.
    pub fn write_snapshot<'a>(
        &self,
        records: impl Iterator<Item = &'a FileRecord>,
    ) -> Result<(), StoreError> {
        self.write_index(&Index::from_records(records.cloned()))
            .map(|_| ())
    }

    /// Write a fresh snapshot of `index` and start an empty journal.
    /// Returns the snapshot's id (what [`Index::saved_snapshot`] reports
    /// once it is loaded), which files kept beside it bind to.
    pub fn write_index(&self, index: &Index) -> Result<[u8; 32], StoreError> {
        self.write_index_on(index, 1)
    }

    /// [`write_index`](Self::write_index), its tables encoded on more than
    /// one thread when `threads` > 1 (the same bytes: see
    /// `index/snapshot.rs`).
    pub(crate) fn write_index_on(
        &self,
        index: &Index,
        threads: usize,
    ) -> Result<[u8; 32], StoreError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        if !index.is_intact() {
            // Saved chunks failed their checks: what it would encode is not
            // the index (the refresh that finds this rebuilds from the files).
            let snap = self.snapshot_path();
            return Err(StoreError::Io {
                path: snap,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "refusing to save an index whose saved chunks failed their checksums; it is rebuilt from the files",
                ),
            });
        }
        create_private_dir(&self.dir).map_err(io(&self.dir))?;
        self.check_owner()?;
        let snap = self.snapshot_path();
        let snapshot_id =
            write_snapshot_file(&snap, &self.header(SNAPSHOT_MAGIC).buf, index, threads > 1)
                .map_err(io(&snap))?;
        let mut journal = self.header(JOURNAL_MAGIC);
        journal.raw(&snapshot_id);
        let jp = self.journal_path();
        atomic_write(&jp, &[&journal.buf]).map_err(io(&jp))?;
        Ok(snapshot_id)
    }

    /// Refuse a cache directory another user owns or others may write to
    /// (see the module docs, N6).
    pub fn check_owner(&self) -> Result<(), StoreError> {
        check_cache_dir(&self.dir)
    }

    /// Append entries to the journal (requires a snapshot written before).
    pub fn append(&self, entries: &[JournalEntry]) -> Result<(), StoreError> {
        self.check_owner()?;
        let jp = self.journal_path();
        let mut buf = Writer::default();
        for e in entries {
            let mut w = Writer::default();
            write_entry(&mut w, e);
            let digest = sha256(&w.buf);
            buf.bytes(&w.buf);
            buf.raw(&digest);
        }
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(&jp)
            .map_err(|source| StoreError::Io {
                path: jp.clone(),
                source,
            })?;
        f.write_all(&buf.buf)
            .and_then(|_| f.flush())
            .map_err(|source| StoreError::Io { path: jp, source })
    }

    /// Journal size in bytes (to decide when to fold it into a snapshot).
    pub fn journal_bytes(&self) -> u64 {
        fs::metadata(self.journal_path()).map_or(0, |m| m.len())
    }

    /// Snapshot size in bytes.
    pub fn snapshot_bytes(&self) -> u64 {
        fs::metadata(self.snapshot_path()).map_or(0, |m| m.len())
    }
}

/// Write `index` as a snapshot at `path` (a temporary file renamed into
/// place): the header, room for the directory, the sections as they are
/// encoded, then the directory in its room. Returns the snapshot's id
/// (the SHA-256 of its directory).
fn write_snapshot_file(
    path: &Path,
    head: &[u8],
    index: &Index,
    parallel: bool,
) -> std::io::Result<[u8; 32]> {
    use std::io::{Seek, SeekFrom};
    let (file, tmp) = create_temp(path)?;
    let write = || -> std::io::Result<Vec<u8>> {
        let mut f = std::io::BufWriter::with_capacity(1 << 20, file);
        f.write_all(head)?;
        f.write_all(&[0u8; crate::index::DIRECTORY_BYTES])?;
        let directory = index.encode(&mut |bytes: &[u8]| f.write_all(bytes), parallel)?;
        let mut f = f.into_inner().map_err(|e| e.into_error())?;
        f.seek(SeekFrom::Start(head.len() as u64))?;
        f.write_all(&directory)?;
        f.sync_all()?;
        Ok(directory.to_vec())
    };
    let directory = match write() {
        Ok(d) => d,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    finish_temp(Ok(()), &tmp, path)?;
    Ok(sha256(&directory))
}

/// A saved file's bytes (the snapshot, the vectors file): mapped, or read
/// whole where mapping is refused (an empty file, a file system without
/// mmap).
pub(crate) fn map(file: &fs::File) -> std::io::Result<Backing> {
    // N10: a small file is copied, so truncation under us cannot fault.
    if file.metadata().is_ok_and(|m| m.len() <= MAP_THRESHOLD) {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut &*file, &mut bytes)?;
        return Ok(Backing::Owned(bytes));
    }
    // SAFETY: the mapping is read-only and the file is never written in
    // place: every writer (this process or another `cgp`) writes a
    // temporary file and renames it over this one, which leaves the mapped
    // inode and its bytes untouched. A file truncated in place by someone
    // else while mapped would fault on access: files up to MAP_THRESHOLD
    // are copied above, and `cgp` reports a fault on a larger one (N10).
    #[allow(unsafe_code)] // one of the crate's two unsafe sites (semantic_rows.rs has the other)
    let mapped = unsafe { memmap2::Mmap::map(file) };
    match mapped {
        Ok(m) => Ok(Backing::Mapped(m)),
        Err(_) => {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut &*file, &mut bytes)?;
            Ok(Backing::Owned(bytes))
        }
    }
}

/// Write `parts` one after the other to a temporary file, then rename it
/// over `path`: a reader sees the old file or the new one, never half of
/// one. The temporary name carries the process id, so two processes
/// writing the same file do not write into each other's temporary.
pub(crate) fn atomic_write(path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let (mut f, tmp) = create_temp(path)?;
    let written = parts
        .iter()
        .try_for_each(|part| f.write_all(part))
        .and_then(|()| f.sync_all());
    drop(f);
    finish_temp(written, &tmp, path)
}

/// A new temporary file beside `path`: an unpredictable name (process id
/// and 64 random bits), created exclusively (never through a symlink,
/// never an existing file), readable by the user only (N6).
pub(crate) fn create_temp(path: &Path) -> std::io::Result<(fs::File, PathBuf)> {
    use std::hash::{BuildHasher, Hasher};
    let mut last = None;
    for attempt in 0..8u32 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(attempt);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let tmp = path.with_extension(format!("tmp{}.{:016x}", std::process::id(), h.finish()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary file name was free")))
}

/// Rename the written temporary over `path`, or remove it when writing failed.
fn finish_temp(written: std::io::Result<()>, tmp: &Path, path: &Path) -> std::io::Result<()> {
    match written.and_then(|()| fs::rename(tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = fs::remove_file(tmp);
            Err(e)
        }
    }
}

/// `dir` and its missing parents, new ones readable by the user only.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// The cache directory `dir` (which exists) is this user's and only theirs
/// to write (N6): owned by the effective user, not writable by group or
/// others, and not a symlink.
#[cfg(unix)]
pub fn check_cache_dir(dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: String| StoreError::ForeignCache {
        path: dir.to_path_buf(),
        why,
    };
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(StoreError::Io {
                path: dir.to_path_buf(),
                source,
            })
        }
    };
    if meta.file_type().is_symlink() {
        return Err(refuse(
            "is a symlink, which another user could point anywhere".into(),
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(refuse(format!(
            "belongs to another user (uid {}), who could plant an index there or swap its files",
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(refuse(format!(
            "may be written by other users (mode {:o}); run chmod go-w on it",
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

/// Ownership is a Unix notion; elsewhere every directory is accepted.
#[cfg(not(unix))]
pub fn check_cache_dir(_dir: &Path) -> Result<(), StoreError> {
    Ok(())
}

fn stamp_field(w: &mut Writer, stamp: Option<Stamp>) {
    let mut field = Writer::default();
    crate::tree::write_opt_stamp(&mut field, &stamp);
    w.bytes(&field.buf);
}

fn read_stamp_field(r: &mut Reader<'_>) -> Option<Option<Stamp>> {
    let field = r.bytes()?;
    let mut fr = Reader::new(field);
    let stamp = crate::tree::read_opt_stamp(&mut fr)?;
    fr.is_empty().then_some(stamp)
}

fn write_entry(w: &mut Writer, e: &JournalEntry) {
    match e {
        JournalEntry::Upsert(f) => {
            w.u8(1);
            crate::codec::write_file(w, f, true);
        }
        JournalEntry::Delete(p) => {
            w.u8(2);
            w.str(p);
        }
        JournalEntry::Touch {
            rel_path,
            size,
            mtime_ns,
        } => {
            w.u8(3);
            w.str(rel_path);
            w.u64(*size);
            match mtime_ns {
                Some(m) => {
                    w.u8(1);
                    w.raw(&m.to_le_bytes());
                }
                None => w.u8(0),
            }
        }
    }
}

fn read_entry(r: &mut Reader<'_>) -> Option<JournalEntry> {
    let e = match r.u8()? {
        1 => JournalEntry::Upsert(crate::codec::read_file(r, true)?),
        2 => JournalEntry::Delete(r.string()?),
        3 => JournalEntry::Touch {
            rel_path: r.string()?,
            size: r.u64()?,
            mtime_ns: match r.u8()? {
                0 => None,
                1 => Some(i128::from_le_bytes(r.take(16)?.try_into().ok()?)),
                _ => return None,
            },
        },
        _ => return None,
    };
    r.is_empty().then_some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_names_the_workspace_its_header_records_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf(), Path::new("/src/project"));
        assert_eq!(recorded_workspace(dir.path()), None, "no files yet");
        fs::write(store.journal_path(), b"not an index at all").unwrap();
        assert_eq!(recorded_workspace(dir.path()), None);
        fs::write(store.journal_path(), &store.header(JOURNAL_MAGIC).buf).unwrap();
        assert_eq!(
            recorded_workspace(dir.path()),
            Some(("/src/project".to_owned(), FORMAT_VERSION))
        );
        // A truncated header names nothing rather than half a path.
        let header = store.header(JOURNAL_MAGIC).buf;
        fs::write(store.journal_path(), &header[..header.len() - 3]).unwrap();
        assert_eq!(recorded_workspace(dir.path()), None);
    }
}
