//! The binary stored index (`history.idx`): the commit records *and* the
//! postings and lookups built from them, so that a warm open reads them
//! back instead of parsing a large JSON file and tokenizing every commit
//! again (issue 27: a 100,000-commit history opens in well under a second).
//!
//! Layout, all integers little-endian:
//!
//! ```text
//! header (72 bytes)
//!   magic        8 bytes  "CGPHIDX\0"
//!   format       u32      FORMAT; any other is rebuilt
//!   reserved     u32      0
//!   checksum     u32      CRC-32 (IEEE) of everything after the header
//!   reserved     u32      0
//!   section      u64 × 6  byte lengths of the sections, in order:
//! meta      root (the working tree), head, truncated u8, shallow u8, unreadable u64
//! records   the newer half of the commits (the first ⌈n/2⌉): count u32,
//!           then per commit: id, author, author_time i64, commit_time i64,
//!           subject, body, parents u32, withheld u32, refused u8,
//!           boundary u8, path count u32, per path: path, from (u8 0/1
//!           then the string), change u8 (A M D R = 0 1 2 3)
//! records   the older half, the same way (two sections so that two
//!           threads decode them side by side: the records are most of
//!           the work of a warm open)
//! lengths   count u32, then one u32 per commit: its weighted token count
//! terms     count u32, then per term (in term-id order): the term, posting
//!           count u32, per posting: commit position u32, frequency u16
//! paths     count u32, then per path (in path-id order): the path, commit
//!           count u32, per commit: position u32
//! ```
//!
//! A string is a u32 byte length then UTF-8. Reading is bounded by the
//! bytes present: every length is checked against what is left before
//! anything is allocated, every position against the commit count, and
//! the whole file against [`MAX_FILE_BYTES`], so a truncated, corrupt or
//! hostile file is an [`IndexFileError`] (and a rebuild), never a panic or
//! an allocation larger than the file. The checksum catches a torn or
//! bit-flipped file before any of that; the checks behind it are for a file
//! written to look valid.

use std::path::{Path, PathBuf};

use crate::record::{Change, ChangedPath, CommitRecord};
use crate::search::{Map, Postings, Searchable};
use crate::store::Snapshot;

/// The first bytes of every stored index.
pub const MAGIC: &[u8; 8] = b"CGPHIDX\0";

/// The format written; a file of any other is rebuilt.
pub const FORMAT: u32 = 2;

/// The header's size in bytes.
const HEADER_BYTES: usize = 24 + 8 * SECTIONS;

/// Number of sections after the header.
const SECTIONS: usize = 6;

/// Largest stored index read (a 100,000-commit history writes ≈ 40 MB;
/// 200,000 commits, the cap, about twice that). A larger file is refused
/// before it is read, and the index is built from the repository instead.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Why a stored index was not used. Each says which file, and that the
/// index is rebuilt from the repository (nothing for a person to do unless
/// it keeps happening: then delete the file).
#[derive(Debug, thiserror::Error)]
pub enum IndexFileError {
    /// The file could not be read.
    #[error("{}: cannot read the history index {}: {message}; rebuilding it from the repository", crate::PROVIDER_NAME, file.display())]
    Io {
        /// The index file.
        file: PathBuf,
        /// What the system said.
        message: String,
    },
    /// The cache directory may be written by someone else (N6).
    #[error("{}: the history index {} is in a directory this user does not control ({message}); not read, rebuilt in memory", crate::PROVIDER_NAME, file.display())]
    Untrusted {
        /// The index file.
        file: PathBuf,
        /// Why the directory is not trusted.
        message: String,
    },
    /// Larger than [`MAX_FILE_BYTES`].
    #[error("{}: the history index {} is {bytes} bytes, more than the {} read; rebuilding it from the repository", crate::PROVIDER_NAME, file.display(), MAX_FILE_BYTES)]
    TooLarge {
        /// The index file.
        file: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// Not a history index, or of another format (an older or newer
    /// version of this provider wrote it).
    #[error("{}: the history index {} is not format {FORMAT} ({found}); rebuilding it from the repository", crate::PROVIDER_NAME, file.display())]
    Format {
        /// The index file.
        file: PathBuf,
        /// What was found instead.
        found: String,
    },
    /// The file describes another working tree (a cache directory shared
    /// by mistake, or a moved tree).
    #[error("{}: the history index {} describes {found}, not this working tree; rebuilding it from the repository", crate::PROVIDER_NAME, file.display())]
    OtherTree {
        /// The index file.
        file: PathBuf,
        /// The tree it names.
        found: String,
    },
    /// Truncated, bit-flipped or inconsistent.
    #[error("{}: the history index {} is damaged ({what}); rebuilding it from the repository", crate::PROVIDER_NAME, file.display())]
    Corrupt {
        /// The index file.
        file: PathBuf,
        /// What is wrong, e.g. `checksum mismatch`, `truncated in the records`.
        what: String,
    },
}

/// Little-endian writer.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A count or length; what the index holds is far below `u32::MAX`
    /// (commits are capped, bodies and path lists too), and a reader
    /// checks every length against the bytes present anyway.
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
}

/// Why a section did not decode (the file is added by the caller).
type Bad = &'static str;

/// Bounds-checked little-endian reader over one section.
struct Reader<'a> {
    buf: &'a [u8],
    what: Bad,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Bad> {
        if n > self.buf.len() {
            return Err(self.what);
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Bad> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, Bad> {
        Ok(self.array::<1>()?[0])
    }
    fn bool(&mut self) -> Result<bool, Bad> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err("a flag that is neither 0 nor 1"),
        }
    }
    fn u16(&mut self) -> Result<u16, Bad> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, Bad> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, Bad> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, Bad> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    /// A count of items at least `min_bytes` each: refused when the section
    /// cannot hold that many, so no allocation exceeds the bytes present.
    fn count(&mut self, min_bytes: usize) -> Result<usize, Bad> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes.max(1)) > self.buf.len() {
            return Err(self.what);
        }
        Ok(n)
    }
    fn str(&mut self) -> Result<String, Bad> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| "a string that is not UTF-8")
    }
    fn end(&self) -> Result<(), Bad> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err("bytes after the end of a section")
        }
    }
}

/// The stored form of `index` for the working tree `root`.
pub fn encode(index: &Searchable, root: &str) -> Vec<u8> {
    let s = &index.snapshot;
    let mut meta = Writer::default();
    meta.str(root);
    meta.str(&s.head);
    meta.u8(u8::from(s.truncated));
    meta.u8(u8::from(s.shallow));
    meta.u64(s.unreadable);

    let (newer, older) = s.commits.split_at(s.commits.len().div_ceil(2));
    let (newer, older) = (encode_records(newer), encode_records(older));

    let mut lengths = Writer::default();
    lengths.len(index.lengths.len());
    for &l in &index.lengths {
        lengths.u32(l);
    }

    let mut terms = Writer::default();
    terms.len(index.postings.len());
    for (term, list) in by_id_order(&index.term_ids, index.postings.len())
        .into_iter()
        .zip(&index.postings)
    {
        terms.str(term);
        terms.len(list.len());
        for &(pos, tf) in list {
            terms.u32(pos);
            terms.u16(tf);
        }
    }

    let mut paths = Writer::default();
    paths.len(index.by_path.len());
    for (path, list) in by_id_order(&index.path_ids, index.by_path.len())
        .into_iter()
        .zip(&index.by_path)
    {
        paths.str(path);
        paths.len(list.len());
        for &pos in list {
            paths.u32(pos);
        }
    }

    let sections = [meta.0, newer, older, lengths.0, terms.0, paths.0];
    let body_len: usize = sections.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(HEADER_BYTES + body_len);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    for s in &sections {
        crc.update(s);
    }
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for s in &sections {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    }
    debug_assert_eq!(out.len(), HEADER_BYTES);
    for s in &sections {
        out.extend_from_slice(s);
    }
    out
}

/// One records section: a count, then each commit.
fn encode_records(commits: &[CommitRecord]) -> Vec<u8> {
    let mut records = Writer::default();
    records.len(commits.len());
    for c in commits {
        records.str(&c.id);
        records.str(&c.author);
        records.i64(c.author_time);
        records.i64(c.commit_time);
        records.str(&c.subject);
        records.str(&c.body);
        records.u32(c.parents);
        records.u32(c.withheld);
        records.u8(u8::from(c.refused));
        records.u8(u8::from(c.boundary));
        records.len(c.paths.len());
        for p in &c.paths {
            records.str(&p.path);
            match &p.from {
                Some(f) => {
                    records.u8(1);
                    records.str(f);
                }
                None => records.u8(0),
            }
            records.u8(match p.change {
                Change::Added => 0,
                Change::Modified => 1,
                Change::Deleted => 2,
                Change::Renamed => 3,
            });
        }
    }

    records.0
}

/// The keys of an interning map listed by their ids (`0..n`).
fn by_id_order(ids: &Map<u32>, n: usize) -> Vec<&str> {
    let mut keys = vec![""; n];
    for (k, &id) in ids {
        if let Some(slot) = keys.get_mut(id as usize) {
            *slot = k.as_str();
        }
    }
    keys
}

/// The index stored in `bytes` (the contents of `file`), for the working
/// tree `root`. Checks the header, the checksum and every length; the
/// records and the postings are decoded on two threads side by side.
pub fn decode(bytes: &[u8], file: &Path, root: &str) -> Result<Searchable, IndexFileError> {
    let corrupt = |what: &str| IndexFileError::Corrupt {
        file: file.to_path_buf(),
        what: what.to_owned(),
    };
    let Some((header, body)) = bytes.split_at_checked(HEADER_BYTES) else {
        return Err(if bytes.starts_with(MAGIC) || MAGIC.starts_with(bytes) {
            corrupt("truncated in the header")
        } else {
            IndexFileError::Format {
                file: file.to_path_buf(),
                found: "not a history index".into(),
            }
        });
    };
    let mut h = Reader {
        buf: header,
        what: "truncated in the header",
    };
    let magic: [u8; 8] = h.array().map_err(corrupt)?;
    if &magic != MAGIC {
        return Err(IndexFileError::Format {
            file: file.to_path_buf(),
            found: "not a history index".into(),
        });
    }
    let format = h.u32().map_err(corrupt)?;
    if format != FORMAT {
        return Err(IndexFileError::Format {
            file: file.to_path_buf(),
            found: format!("format {format}"),
        });
    }
    let _reserved = h.u32().map_err(corrupt)?;
    let checksum = h.u32().map_err(corrupt)?;
    let _reserved = h.u32().map_err(corrupt)?;
    let mut lens = [0u64; SECTIONS];
    for l in &mut lens {
        *l = h.u64().map_err(corrupt)?;
    }
    let total = lens.iter().try_fold(0u64, |a, &l| a.checked_add(l));
    if total != Some(body.len() as u64) {
        return Err(corrupt("truncated, or its section lengths do not add up"));
    }
    if crc32fast::hash(body) != checksum {
        return Err(corrupt("checksum mismatch"));
    }
    let mut sections = [&body[..0]; SECTIONS];
    let mut rest = body;
    for (s, &l) in sections.iter_mut().zip(&lens) {
        // Fits: the lengths add up to the body's, checked above.
        let (head, tail) = rest.split_at(l as usize);
        *s = head;
        rest = tail;
    }
    let [meta, newer, older, lengths, terms, paths] = sections;

    let mut m = Reader {
        buf: meta,
        what: "truncated in the header fields",
    };
    let stored_root = m.str().map_err(corrupt)?;
    if stored_root != root {
        return Err(IndexFileError::OtherTree {
            file: file.to_path_buf(),
            found: stored_root,
        });
    }
    let head = m.str().map_err(corrupt)?;
    let truncated = m.bool().map_err(corrupt)?;
    let shallow = m.bool().map_err(corrupt)?;
    let unreadable = m.u64().map_err(corrupt)?;
    m.end().map_err(corrupt)?;

    // Three parts of similar size decoded side by side (the newer records
    // here, the older ones and the postings on two threads). A panic in a
    // thread is a bug here (every read is checked), not bad input: that
    // part is then decoded on this thread.
    let postings_of = || -> Result<_, Bad> {
        Ok((
            decode_lengths(lengths)?,
            decode_terms(terms)?,
            decode_paths(paths)?,
        ))
    };
    let (newer, older, rest) = std::thread::scope(|scope| {
        let older_job = scope.spawn(|| decode_records(older));
        let rest_job = scope.spawn(postings_of);
        let newer = decode_records(newer);
        let older = older_job.join().unwrap_or_else(|_| decode_records(older));
        let rest = rest_job.join().unwrap_or_else(|_| postings_of());
        (newer, older, rest)
    });
    let (mut commits, mut by_id) = newer.map_err(corrupt)?;
    let (older, older_ids) = older.map_err(corrupt)?;
    let offset = commits.len() as u32;
    for (id, pos) in older_ids {
        if by_id.insert(id, pos + offset).is_some() {
            return Err(corrupt("a commit listed twice"));
        }
    }
    commits.extend(older);
    let (lengths, (term_ids, postings), (path_ids, by_path)) = rest.map_err(corrupt)?;
    let n = commits.len();
    if lengths.len() != n {
        return Err(corrupt(
            "a commit length count that is not the commit count",
        ));
    }
    let in_range = |list: &[u32]| list.iter().all(|&p| (p as usize) < n);
    if !postings
        .iter()
        .all(|l| l.iter().all(|&(p, _)| (p as usize) < n))
    {
        return Err(corrupt("a posting past the last commit"));
    }
    if !by_path.iter().all(|l| in_range(l)) {
        return Err(corrupt("a path's commit past the last commit"));
    }
    Ok(Searchable::from_parts(
        Snapshot {
            head,
            truncated,
            shallow,
            unreadable,
            commits,
        },
        by_id,
        by_path,
        path_ids,
        term_ids,
        postings,
        lengths,
    ))
}

/// The commit records, and the position of each by id.
fn decode_records(buf: &[u8]) -> Result<(Vec<CommitRecord>, Map<u32>), Bad> {
    let mut r = Reader {
        buf,
        what: "truncated in the records",
    };
    // id, author, subject, body (4 + 4 bytes min each), times, counts, flags.
    let n = r.count(16 + 16 + 8 + 2 + 4)?;
    let mut commits = Vec::with_capacity(n);
    let mut by_id = Map::with_capacity_and_hasher(n, Default::default());
    for i in 0..n {
        let id = r.str()?;
        let author = r.str()?;
        let author_time = r.i64()?;
        let commit_time = r.i64()?;
        let subject = r.str()?;
        let body = r.str()?;
        let parents = r.u32()?;
        let withheld = r.u32()?;
        let refused = r.bool()?;
        let boundary = r.bool()?;
        let np = r.count(4 + 1 + 1)?;
        let mut paths = Vec::with_capacity(np);
        for _ in 0..np {
            let path = r.str()?;
            let from = if r.bool()? { Some(r.str()?) } else { None };
            let change = match r.u8()? {
                0 => Change::Added,
                1 => Change::Modified,
                2 => Change::Deleted,
                3 => Change::Renamed,
                _ => return Err("an unknown kind of change"),
            };
            paths.push(ChangedPath { path, from, change });
        }
        if by_id.insert(id.clone(), i as u32).is_some() {
            return Err("a commit listed twice");
        }
        commits.push(CommitRecord {
            id,
            author,
            author_time,
            commit_time,
            subject,
            body,
            parents,
            paths,
            withheld,
            refused,
            boundary,
        });
    }
    r.end()?;
    Ok((commits, by_id))
}

/// Each commit's weighted token count.
fn decode_lengths(buf: &[u8]) -> Result<Vec<u32>, Bad> {
    let mut r = Reader {
        buf,
        what: "truncated in the commit lengths",
    };
    let n = r.count(4)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(r.u32()?);
    }
    r.end()?;
    Ok(out)
}

/// The term dictionary and each term's postings (positions ascending).
fn decode_terms(buf: &[u8]) -> Result<(Map<u32>, Vec<Postings>), Bad> {
    let mut r = Reader {
        buf,
        what: "truncated in the terms",
    };
    let n = r.count(4 + 4)?;
    let mut ids = Map::with_capacity_and_hasher(n, Default::default());
    let mut lists = Vec::with_capacity(n);
    for id in 0..n {
        let term = r.str()?;
        let k = r.count(6)?;
        let mut list: Postings = Vec::with_capacity(k);
        for _ in 0..k {
            let pos = r.u32()?;
            let tf = r.u16()?;
            if list.last().is_some_and(|&(last, _)| last >= pos) {
                return Err("postings out of order");
            }
            list.push((pos, tf));
        }
        if ids.insert(term, id as u32).is_some() {
            return Err("a term listed twice");
        }
        lists.push(list);
    }
    r.end()?;
    Ok((ids, lists))
}

/// The paths and the commits (positions, newest first) that changed each.
fn decode_paths(buf: &[u8]) -> Result<(Map<u32>, Vec<Vec<u32>>), Bad> {
    let mut r = Reader {
        buf,
        what: "truncated in the paths",
    };
    let n = r.count(4 + 4)?;
    let mut ids = Map::with_capacity_and_hasher(n, Default::default());
    let mut lists = Vec::with_capacity(n);
    for id in 0..n {
        let path = r.str()?;
        let k = r.count(4)?;
        let mut list = Vec::with_capacity(k);
        for _ in 0..k {
            list.push(r.u32()?);
        }
        if ids.insert(path, id as u32).is_some() {
            return Err("a path listed twice");
        }
        lists.push(list);
    }
    r.end()?;
    Ok((ids, lists))
}
