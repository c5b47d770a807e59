//! The saved index as it lies in memory after a load: the snapshot's bytes
//! (memory-mapped, or owned after a compaction) cut into checksummed
//! sections, read in place. Nothing here decodes a section whole: a lookup
//! binary-searches a sorted table and decodes the one entry it lands on, so
//! a warm load costs the checksums and the per-file table, not the postings.
//!
//! # Layout (format 5 payload)
//!
//! A directory of [`SECTIONS`] entries (offset, length, CRC-32 each, then
//! a CRC-32 of the directory itself), then the sections, in this order:
//!
//! | section | content |
//! | --- | --- |
//! | records | per file, its chunk records without terms |
//! | files | per file: its head (path, hash, size, time, language, gate), chunk count, where its chunks lie in `records` and their CRC-32 |
//! | doc lens | per slot, its BM25 length (`u32` LE) |
//! | chunk offsets | per slot, where its chunk record starts in `records` (`u64` LE) |
//! | terms | table: term → postings (count, first slot then gaps, each with its tf) |
//! | defs, mentions, importers | tables: name or path → slots (count, first slot then gaps) |
//! | forward | per slot, its term ids (count, first id then gaps), offsets first |
//!
//! A *table* is `n` (`u64`), `n + 1` offsets (`u64`) into its data, then
//! the data: per entry a varint key length, the key, then the entry's
//! payload. Keys are strictly sorted (byte order), so a lookup is a binary
//! search over the offsets.
//!
//! Every section's CRC-32 but the records' is checked when the snapshot is
//! opened (at memory speed, no allocation), so what is decoded later was
//! written by us. The records section (more than half of the file) is
//! checked file by file instead, when a file's chunks are first read: a
//! load does not pay for the chunks no query reads. Every read is
//! bounds-checked all the same, so even a checksum collision cannot panic:
//! a malformed entry reads as absent.

use std::ops::Range;
use std::sync::Arc;

use crate::codec::Reader;

/// Number of sections, in the order of the module docs.
/// (The order in which a snapshot write produces them: the largest, the
/// records, can then be written as it is encoded instead of held.)
pub(super) const SECTIONS: usize = 9;
pub(super) const RECORDS: usize = 0;
pub(super) const FILES: usize = 1;
pub(super) const DOC_LENS: usize = 2;
pub(super) const CHUNK_AT: usize = 3;
pub(super) const TERMS: usize = 4;
pub(super) const DEFS: usize = 5;
pub(super) const MENTIONS: usize = 6;
pub(super) const IMPORTERS: usize = 7;
pub(super) const FORWARD: usize = 8;

/// Bytes of the directory: per section offset, length (`u64`) and CRC-32,
/// then the directory's own CRC-32.
pub(crate) const DIRECTORY_BYTES: usize = SECTIONS * 20 + 4;

/// The bytes a snapshot is read from.
pub enum Backing {
    /// The snapshot file, mapped read-only.
    Mapped(memmap2::Mmap),
    /// Bytes in memory (a compaction's result, a test's buffer).
    Owned(Vec<u8>),
}

impl std::fmt::Debug for Backing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, len) = match self {
            Backing::Mapped(m) => ("mapped", m.len()),
            Backing::Owned(v) => ("owned", v.len()),
        };
        write!(f, "Backing({kind}, {len} bytes)")
    }
}

impl std::ops::Deref for Backing {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

/// A sorted table inside the snapshot (see the module docs).
#[derive(Debug, Clone, Default)]
pub(super) struct Table {
    /// Where the `n + 1` offsets lie.
    offsets: Range<usize>,
    /// Where the entries lie (the offsets are relative to its start).
    data: Range<usize>,
    len: usize,
}

/// The snapshot's bytes and where its sections lie.
#[derive(Debug)]
pub(super) struct Frozen {
    bytes: Arc<Backing>,
    sections: [Range<usize>; SECTIONS],
    pub(super) terms: Table,
    pub(super) defs: Table,
    pub(super) mentions: Table,
    pub(super) importers: Table,
    /// The forward section as a table without keys: `n_slots + 1` offsets.
    forward: Table,
    /// The SHA-256 of the section directory: names this snapshot's content
    /// (the directory holds every section's length and checksum), as the
    /// journal and the vectors file do to say which snapshot they extend.
    pub(super) id: [u8; 32],
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

/// CRC-32 of bytes (the section checksum).
pub(super) fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

impl Frozen {
    /// The snapshot payload starting at `start` in `bytes`: the directory is
    /// read, every section's checksum checked and the tables' shapes
    /// validated. `None` when anything is off (the caller rebuilds).
    pub(super) fn open(bytes: Arc<Backing>, start: usize) -> Option<Frozen> {
        let all: &[u8] = &bytes;
        let dir = all.get(start..start.checked_add(DIRECTORY_BYTES)?)?;
        let (entries, own) = dir.split_at(SECTIONS * 20);
        if crc32(entries) != u32::from_le_bytes(own.try_into().ok()?) {
            return None;
        }
        let payload_len = all.len() - start;
        let mut sections: [Range<usize>; SECTIONS] = Default::default();
        let mut expected = DIRECTORY_BYTES;
        for (i, section) in sections.iter_mut().enumerate() {
            let off = usize::try_from(u64_at(entries, i * 20)?).ok()?;
            let len = usize::try_from(u64_at(entries, i * 20 + 8)?).ok()?;
            // Sections follow one another with no gap: nothing unchecked.
            if off != expected || len > payload_len.checked_sub(off)? {
                return None;
            }
            expected = off + len;
            *section = start + off..start + off + len;
        }
        if expected != payload_len {
            return None; // trailing bytes
        }
        // The checksums, on two threads (terms, the largest checked here,
        // on its own); the records are checked per file, on first use.
        let ok = std::thread::scope(|scope| {
            let check = |i: usize| {
                let crc = u32_at(entries, i * 20 + 16);
                all.get(sections[i].clone())
                    .is_some_and(|s| Some(crc32(s)) == crc)
            };
            let worker = std::thread::Builder::new()
                .name("cgp-index-checksum".into())
                .spawn_scoped(scope, move || check(TERMS));
            let mine = (0..SECTIONS)
                .filter(|i| *i != TERMS && *i != RECORDS)
                .all(check);
            let theirs = match worker {
                Ok(h) => h.join().unwrap_or(false),
                Err(_) => check(TERMS),
            };
            mine && theirs
        });
        if !ok {
            return None;
        }
        let table = |i: usize| Table::at(all, sections[i].clone());
        let terms = table(TERMS)?;
        let defs = table(DEFS)?;
        let mentions = table(MENTIONS)?;
        let importers = table(IMPORTERS)?;
        let forward = Table::at(all, sections[FORWARD].clone())?;
        Some(Frozen {
            id: super::sha256(dir),
            terms,
            defs,
            mentions,
            importers,
            forward,
            sections,
            bytes,
        })
    }

    /// A section's bytes.
    pub(super) fn section(&self, i: usize) -> &[u8] {
        self.sections
            .get(i)
            .and_then(|r| self.bytes.get(r.clone()))
            .unwrap_or(&[])
    }

    /// The bytes of an entry of `table`: its key and its payload.
    pub(super) fn entry<'a>(&'a self, table: &Table, i: usize) -> Option<(&'a [u8], &'a [u8])> {
        let raw = table.raw(&self.bytes, i)?;
        let mut r = Reader::new(raw);
        let key_len = r.varint_len()?;
        let key = r.take(key_len)?;
        Some((key, r.rest()))
    }

    /// The index of `key` in `table`, by binary search.
    pub(super) fn find(&self, table: &Table, key: &[u8]) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, table.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (k, _) = self.entry(table, mid)?;
            match k.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The payload stored under `key` in `table`.
    pub(super) fn lookup<'a>(&'a self, table: &Table, key: &[u8]) -> Option<&'a [u8]> {
        self.find(table, key)
            .and_then(|i| self.entry(table, i))
            .map(|(_, payload)| payload)
    }

    /// A slot's term ids as saved (sorted), for slots the snapshot holds.
    pub(super) fn forward(&self, slot: u32) -> SlotList<'_> {
        SlotList::new(self.forward.raw(&self.bytes, slot as usize).unwrap_or(&[]))
    }

    /// Where a saved slot's chunk record starts in the records section.
    pub(super) fn chunk_at(&self, slot: u32) -> Option<usize> {
        let at = (slot as usize).checked_mul(8)?;
        usize::try_from(u64_at(self.section(CHUNK_AT), at)?).ok()
    }

    /// Number of slots the forward section describes.
    pub(super) fn forward_len(&self) -> usize {
        self.forward.len
    }
}

impl Table {
    /// The table in `range` of `bytes`; `None` when its shape is off.
    fn at(bytes: &[u8], range: Range<usize>) -> Option<Table> {
        let n = usize::try_from(u64_at(bytes, range.start)?).ok()?;
        let offsets_start = range.start + 8;
        let offsets_len = n.checked_add(1)?.checked_mul(8)?;
        let data_start = offsets_start.checked_add(offsets_len)?;
        if data_start > range.end {
            return None;
        }
        let table = Table {
            offsets: offsets_start..data_start,
            data: data_start..range.end,
            len: n,
        };
        // The last offset closes the data exactly.
        (table.offset(bytes, n)? == range.end - data_start).then_some(table)
    }

    /// Number of entries.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    fn offset(&self, bytes: &[u8], i: usize) -> Option<usize> {
        let at = self.offsets.start.checked_add(i.checked_mul(8)?)?;
        if at.checked_add(8)? > self.offsets.end {
            return None;
        }
        usize::try_from(u64_at(bytes, at)?).ok()
    }

    /// Entry `i`'s bytes.
    fn raw<'a>(&self, bytes: &'a [u8], i: usize) -> Option<&'a [u8]> {
        if i >= self.len {
            return None;
        }
        let a = self.offset(bytes, i)?;
        let b = self.offset(bytes, i + 1)?;
        if a > b {
            return None;
        }
        bytes.get(self.data.start.checked_add(a)?..self.data.start.checked_add(b)?)
    }
}

/// A saved list of ascending numbers (slots or term ids): a varint count,
/// the first number, then the gaps.
#[derive(Debug, Clone)]
pub(super) struct SlotList<'a> {
    r: Reader<'a>,
    left: usize,
    prev: u32,
    first: bool,
}

impl<'a> SlotList<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> SlotList<'a> {
        let mut r = Reader::new(bytes);
        let left = r.varint_len().unwrap_or(0);
        SlotList {
            r,
            left,
            prev: 0,
            first: true,
        }
    }

    /// The count the list declares (the number of items it yields when intact).
    pub(super) fn declared(&self) -> usize {
        self.left
    }
}

impl Iterator for SlotList<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let gap = u32::try_from(self.r.varint()?).ok();
        let v = match gap {
            Some(g) if self.first => Some(g),
            Some(g) if g > 0 => self.prev.checked_add(g),
            _ => None,
        };
        let Some(v) = v else {
            self.left = 0; // malformed: the rest reads as absent
            return None;
        };
        self.first = false;
        self.prev = v;
        Some(v)
    }
}

/// A saved postings list: like [`SlotList`], each slot followed by its tf.
#[derive(Debug, Clone)]
pub(super) struct PostingList<'a> {
    slots: SlotList<'a>,
}

impl<'a> PostingList<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> PostingList<'a> {
        PostingList {
            slots: SlotList::new(bytes),
        }
    }

    pub(super) fn declared(&self) -> usize {
        self.slots.declared()
    }
}

impl Iterator for PostingList<'_> {
    type Item = (u32, u32);
    fn next(&mut self) -> Option<(u32, u32)> {
        let slot = self.slots.next()?;
        match self.slots.r.varint().and_then(|t| u32::try_from(t).ok()) {
            Some(tf) if tf > 0 => Some((slot, tf)),
            _ => {
                self.slots.left = 0;
                None
            }
        }
    }
}
