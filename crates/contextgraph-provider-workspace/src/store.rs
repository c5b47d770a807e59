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
//! (snapshot) and `journal.bin` (changes since the snapshot).
//!
//! # Format and trust
//!
//! Both files start with a magic, the format version and the workspace path;
//! every snapshot payload and every journal entry carries its SHA-256. On load
//! a wrong magic, another version, another workspace, a checksum mismatch, a
//! truncated entry or any decoding error means the index is *not trusted*:
//! the caller rebuilds from the files. Lengths read from disk are bounded by
//! the bytes actually present, so a corrupt length cannot make us allocate.
//! Writes go to a temporary file renamed into place, so a crash leaves the
//! previous snapshot intact.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use contextgraph_types::Timestamp;

use crate::chunk::{ChunkKind, ImportRef, SymbolInfo};
use crate::index::{sha256, ChunkRecord, FileRecord};
use crate::lang::Language;
use crate::walk::SkipReason;

/// Environment variable overriding the cache base directory.
pub const CACHE_DIR_ENV: &str = "CONTEXTGRAPH_WORKSPACE_CACHE";

/// Bumped whenever the encoding or the chunking changes meaning: an index
/// written by another version is rebuilt, never reinterpreted.
pub const FORMAT_VERSION: u32 = 1;

const SNAPSHOT_MAGIC: &[u8; 8] = b"CGPWSIX\x01";
const JOURNAL_MAGIC: &[u8; 8] = b"CGPWSJR\x01";

/// Why a stored index was not used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
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

/// A journal entry.
#[derive(Debug, Clone, PartialEq)]
pub enum JournalEntry {
    /// A file was indexed (or re-indexed).
    Upsert(FileRecord),
    /// A file is gone.
    Delete(String),
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

    /// Bytes on disk (snapshot + journal).
    pub fn size_on_disk(&self) -> u64 {
        [self.snapshot_path(), self.journal_path()]
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Load the snapshot and replay the journal. `Ok(None)` when there is no
    /// index yet; `Err(Untrusted)` when there is one that must not be used.
    pub fn load(&self) -> Result<Option<(Vec<FileRecord>, u64)>, StoreError> {
        let snap = self.snapshot_path();
        let bytes = match fs::read(&snap) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Io { path: snap, source }),
        };
        let untrusted = |path: &Path, why: &str| StoreError::Untrusted {
            path: path.to_path_buf(),
            why: why.to_owned(),
        };
        let mut r = Reader::new(&bytes);
        let (payload, snapshot_id) = self
            .read_header(&mut r, SNAPSHOT_MAGIC)
            .and_then(|_| {
                let digest = r.array32()?;
                let payload = r.rest();
                (sha256(payload) == digest).then_some((payload, digest))
            })
            .ok_or_else(|| untrusted(&snap, "bad header or checksum"))?;
        let mut p = Reader::new(payload);
        let mut files = std::collections::BTreeMap::new();
        let count = p
            .len_prefix()
            .ok_or_else(|| untrusted(&snap, "truncated"))?;
        for _ in 0..count {
            let rec = read_file(&mut p).ok_or_else(|| untrusted(&snap, "undecodable record"))?;
            files.insert(rec.rel_path.clone(), rec);
        }
        if !p.is_empty() {
            return Err(untrusted(&snap, "trailing bytes"));
        }
        let journal = self.journal_path();
        let mut journal_entries = 0u64;
        match fs::read(&journal) {
            Ok(jb) => {
                let mut r = Reader::new(&jb);
                self.read_header(&mut r, JOURNAL_MAGIC)
                    .ok_or_else(|| untrusted(&journal, "bad header"))?;
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
                        JournalEntry::Upsert(rec) => {
                            files.insert(rec.rel_path.clone(), rec);
                        }
                        JournalEntry::Delete(path) => {
                            files.remove(&path);
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
        Ok(Some((files.into_values().collect(), journal_entries)))
    }

    fn read_header(&self, r: &mut Reader<'_>, magic: &[u8; 8]) -> Option<()> {
        (r.take(8)? == magic).then_some(())?;
        (r.u32()? == FORMAT_VERSION).then_some(())?;
        (r.str()? == self.root).then_some(())
    }

    fn header(&self, magic: &[u8; 8]) -> Writer {
        let mut w = Writer::default();
        w.raw(magic);
        w.u32(FORMAT_VERSION);
        w.str(&self.root);
        w
    }

    /// Write a fresh snapshot of `records` and start an empty journal.
    pub fn write_snapshot<'a>(
        &self,
        records: impl Iterator<Item = &'a FileRecord>,
    ) -> Result<(), StoreError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let mut records: Vec<&FileRecord> = records.collect();
        records.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
        let mut payload = Writer::default();
        payload.len(records.len());
        for r in records {
            write_file(&mut payload, r);
        }
        let digest = sha256(&payload.buf);
        let mut out = self.header(SNAPSHOT_MAGIC);
        out.raw(&digest);
        out.raw(&payload.buf);
        let snap = self.snapshot_path();
        atomic_write(&snap, &out.buf).map_err(io(&snap))?;
        let mut journal = self.header(JOURNAL_MAGIC);
        journal.raw(&digest);
        let jp = self.journal_path();
        atomic_write(&jp, &journal.buf).map_err(io(&jp))
    }

    /// Append entries to the journal (requires a snapshot written before).
    pub fn append(&self, entries: &[JournalEntry]) -> Result<(), StoreError> {
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

fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)
}

// ---- encoding ------------------------------------------------------------

#[derive(Default)]
struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.raw(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.raw(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.raw(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.raw(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    fn strs(&mut self, v: &[String]) {
        self.len(v.len());
        for s in v {
            self.str(s);
        }
    }
    fn ts(&mut self, t: Timestamp) {
        self.i64(t.unix_seconds());
        self.u32(t.subsec_nanos());
    }
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }
    fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.buf.len() {
            return None;
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Option<i64> {
        self.take(8)
            .and_then(|b| b.try_into().ok())
            .map(i64::from_le_bytes)
    }
    fn array32(&mut self) -> Option<[u8; 32]> {
        self.take(32).and_then(|b| b.try_into().ok())
    }
    /// A count, refused when it exceeds the bytes left (each item takes at
    /// least one byte), so a corrupt count cannot drive a huge allocation.
    fn len_prefix(&mut self) -> Option<usize> {
        let n = self.u32()? as usize;
        (n <= self.buf.len()).then_some(n)
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn str(&mut self) -> Option<&'a str> {
        self.bytes().and_then(|b| std::str::from_utf8(b).ok())
    }
    fn string(&mut self) -> Option<String> {
        self.str().map(str::to_owned)
    }
    fn opt_string(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.string().map(Some),
            _ => None,
        }
    }
    fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.len_prefix()?;
        (0..n).map(|_| self.string()).collect()
    }
    fn ts(&mut self) -> Option<Timestamp> {
        let secs = self.i64()?;
        let nanos = self.u32()?;
        (nanos < 1_000_000_000).then(|| Timestamp::from_unix(secs, nanos))
    }
}

fn kind_tag(k: ChunkKind) -> u8 {
    match k {
        ChunkKind::Symbol => 0,
        ChunkKind::Doc => 1,
        ChunkKind::Snippet => 2,
    }
}

fn kind_from(t: u8) -> Option<ChunkKind> {
    Some(match t {
        0 => ChunkKind::Symbol,
        1 => ChunkKind::Doc,
        2 => ChunkKind::Snippet,
        _ => return None,
    })
}

fn write_file(w: &mut Writer, f: &FileRecord) {
    w.str(&f.rel_path);
    w.raw(&f.content_hash);
    w.u64(f.size);
    match f.mtime_ns {
        Some(m) => {
            w.u8(1);
            w.raw(&m.to_le_bytes());
        }
        None => w.u8(0),
    }
    w.u8(f.language.tag());
    w.u8(f.skipped.map_or(0, |s| {
        crate::walk::SkipReason::ALL
            .iter()
            .position(|x| *x == s)
            .unwrap_or(0) as u8
            + 1
    }));
    w.len(f.chunks.len());
    for c in &f.chunks {
        w.u8(kind_tag(c.kind));
        w.str(&c.local_id);
        w.str(&c.title);
        match &c.symbol {
            Some(s) => {
                w.u8(1);
                w.str(&s.name);
                w.str(&s.qualified);
                w.str(&s.kind_label);
            }
            None => w.u8(0),
        }
        w.u32(c.start_line);
        w.u32(c.end_line);
        w.u32(c.byte_len);
        w.raw(&c.digest);
        w.str(&c.method);
        w.opt_str(c.outline.as_deref());
        w.ts(c.recorded_at);
        w.ts(c.valid_from);
        w.len(c.terms.len());
        for (t, n) in &c.terms {
            w.str(t);
            w.u32(*n);
        }
        w.u32(c.doc_len);
        w.strs(&c.calls);
        w.strs(&c.references);
        w.strs(&c.documents);
        w.len(c.imports.len());
        for i in &c.imports {
            w.str(&i.module);
            w.strs(&i.candidates);
        }
    }
}

fn read_file(r: &mut Reader<'_>) -> Option<FileRecord> {
    let rel_path = r.string()?;
    let content_hash = r.array32()?;
    let size = r.u64()?;
    let mtime_ns = match r.u8()? {
        0 => None,
        1 => Some(i128::from_le_bytes(r.take(16)?.try_into().ok()?)),
        _ => return None,
    };
    let language = Language::from_tag(r.u8()?)?;
    let skipped = match r.u8()? {
        0 => None,
        n => Some(*SkipReason::ALL.get(usize::from(n) - 1)?),
    };
    let n = r.len_prefix()?;
    let mut chunks = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = kind_from(r.u8()?)?;
        let local_id = r.string()?;
        let title = r.string()?;
        let symbol = match r.u8()? {
            0 => None,
            1 => Some(SymbolInfo {
                name: r.string()?,
                qualified: r.string()?,
                kind_label: r.string()?,
            }),
            _ => return None,
        };
        let start_line = r.u32()?;
        let end_line = r.u32()?;
        let byte_len = r.u32()?;
        let digest = r.array32()?;
        let method = r.string()?;
        let outline = r.opt_string()?;
        let recorded_at = r.ts()?;
        let valid_from = r.ts()?;
        let tn = r.len_prefix()?;
        let mut terms = Vec::with_capacity(tn);
        for _ in 0..tn {
            terms.push((r.string()?, r.u32()?));
        }
        let doc_len = r.u32()?;
        let calls = r.strings()?;
        let references = r.strings()?;
        let documents = r.strings()?;
        let inn = r.len_prefix()?;
        let mut imports = Vec::with_capacity(inn);
        for _ in 0..inn {
            imports.push(ImportRef {
                module: r.string()?,
                candidates: r.strings()?,
            });
        }
        if start_line == 0 || end_line < start_line {
            return None;
        }
        chunks.push(ChunkRecord {
            kind,
            local_id,
            title,
            symbol,
            start_line,
            end_line,
            byte_len,
            digest,
            method,
            outline,
            recorded_at,
            valid_from,
            terms,
            doc_len,
            calls,
            references,
            documents,
            imports,
        });
    }
    Some(FileRecord {
        rel_path,
        content_hash,
        size,
        mtime_ns,
        language,
        skipped,
        chunks,
    })
}

fn write_entry(w: &mut Writer, e: &JournalEntry) {
    match e {
        JournalEntry::Upsert(f) => {
            w.u8(1);
            write_file(w, f);
        }
        JournalEntry::Delete(p) => {
            w.u8(2);
            w.str(p);
        }
    }
}

fn read_entry(r: &mut Reader<'_>) -> Option<JournalEntry> {
    let e = match r.u8()? {
        1 => JournalEntry::Upsert(read_file(r)?),
        2 => JournalEntry::Delete(r.string()?),
        _ => return None,
    };
    r.is_empty().then_some(e)
}
