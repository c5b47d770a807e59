//! The index's persisted form (format 5 payload, laid out as [`super::frozen`]
//! describes): written from the live index, opened in place.

use std::sync::{Arc, OnceLock};

use foldhash::HashMap;

use super::frozen::{
    self, crc32, Backing, Frozen, SlotList, CHUNK_AT, DEFS, DOC_LENS, FILES, FORWARD, IMPORTERS,
    MENTIONS, RECORDS, SECTIONS, TERMS,
};
use super::postings::DEAD;

/// Bytes of chunk records gathered before they are written out: the size of
/// the file writer's buffer, which passes larger writes straight through.
/// At 8 MiB the buffer doubled to 16 MiB at the moment of a cold build's
/// peak memory (the snapshot is written from the complete index), 15% of
/// that peak on a 3k-file tree.
pub(super) const RECORDS_FLUSH: usize = 1 << 20;
use super::terms::TermDict;
use super::{FileEntry, Index, SlotRef};
use crate::codec::{Reader, Writer};

/// The first eight bytes of `bytes`, zero-padded, as a big-endian integer:
/// a key whose order never contradicts the bytes' order. Where two keys
/// differ, at the first byte they differ both strings have that byte (the
/// bytes' order) or the shorter one ended (its zero padding is below the
/// other's byte, and an ended string is below one it begins); equal keys
/// say nothing, and the strings are compared after them.
fn prefix_key(bytes: &[u8]) -> u64 {
    let mut key = [0u8; 8];
    let n = bytes.len().min(8);
    key[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(key)
}

/// Where an encoding goes: the sections in order, each measured and
/// checksummed as it passes, so that a snapshot write streams the largest
/// section to the file instead of holding the whole payload in memory.
struct SectionWriter<'a> {
    out: &'a mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    section: usize,
    lens: [u64; SECTIONS],
    crcs: Vec<crc32fast::Hasher>,
}

impl SectionWriter<'_> {
    /// Bytes of `section` (sections come in order).
    fn put(&mut self, section: usize, bytes: &[u8]) -> std::io::Result<()> {
        if section < self.section || section >= SECTIONS {
            return Err(std::io::Error::other("index sections out of order"));
        }
        self.section = section;
        self.lens[section] += bytes.len() as u64;
        self.crcs[section].update(bytes);
        (self.out)(bytes)
    }

    /// The directory of what was written.
    fn directory(self) -> Vec<u8> {
        let mut directory = Writer::default();
        let mut offset = frozen::DIRECTORY_BYTES as u64;
        for (len, crc) in self.lens.iter().zip(self.crcs) {
            directory.u64(offset);
            directory.u64(*len);
            directory.u32(crc.finalize());
            offset += len;
        }
        let own = crc32(&directory.buf);
        directory.u32(own);
        directory.buf
    }
}

/// A sorted table being written: entries in key order.
///
/// The entries' offsets are kept as the section's head will hold them
/// (a count, then each offset, little-endian), so that finishing the
/// table does not hold a second copy of them: the terms table of a cold
/// build has one per term, over a million on a 16k-file tree.
struct TableWriter {
    /// Eight bytes for the count, then each entry's offset in `data`.
    head: Vec<u8>,
    data: Writer,
}

impl Default for TableWriter {
    fn default() -> Self {
        TableWriter {
            head: vec![0; 8],
            data: Writer::default(),
        }
    }
}

impl TableWriter {
    /// Entries pushed so far.
    fn len(&self) -> usize {
        self.head.len() / 8 - 1
    }

    /// Start an entry at the end of `data`.
    fn mark(&mut self) {
        self.head
            .extend_from_slice(&(self.data.buf.len() as u64).to_le_bytes());
    }

    /// Append an entry: `key` (greater than the previous one) and a payload.
    fn push(&mut self, key: &[u8], payload: impl FnOnce(&mut Writer)) {
        self.mark();
        self.data.varint(key.len() as u64);
        self.data.raw(key);
        payload(&mut self.data);
    }

    /// Write the table as `section`: count and offsets, then the entries.
    fn finish(self, out: &mut SectionWriter<'_>, section: usize) -> std::io::Result<()> {
        for part in self.parts() {
            out.put(section, &part)?;
        }
        Ok(())
    }

    /// The table's two parts: count and offsets (the end of the entries
    /// last), then the entries.
    fn parts(mut self) -> [Vec<u8>; 2] {
        let n = self.len() as u64;
        self.head[..8].copy_from_slice(&n.to_le_bytes());
        self.mark();
        [self.head, self.data.buf]
    }
}

/// Ascending numbers as a saved list: count, first, then gaps.
fn write_ascending(w: &mut Writer, list: &[u32], mut each: impl FnMut(&mut Writer, usize)) {
    w.varint(list.len() as u64);
    let mut prev = 0u32;
    for (i, &v) in list.iter().enumerate() {
        w.varint(u64::from(if i == 0 { v } else { v - prev }));
        each(w, i);
        prev = v;
    }
}

/// `there()` on a thread of its own (named after `table`) while `here()`
/// runs on this one: the encoding's two overlaps, each a table built
/// beside the sections this thread writes. A thread that cannot start
/// fails the save as an I/O error would; one that panics, likewise.
fn beside<T: Send, U>(
    table: &str,
    there: impl FnOnce() -> T + Send,
    here: impl FnOnce() -> std::io::Result<U>,
) -> std::io::Result<(T, U)> {
    std::thread::scope(|scope| {
        let there = std::thread::Builder::new()
            .name(format!("cgp-encode-{table}"))
            .spawn_scoped(scope, there)?;
        let here = here()?;
        let there = there
            .join()
            .map_err(|_| std::io::Error::other(format!("encoding the {table} table panicked")))?;
        Ok((there, here))
    })
}

impl Index {
    /// Encode the live index as a format 5 payload into `out`, section after
    /// section, and return the directory (which goes before them: the
    /// caller leaves [`frozen::DIRECTORY_BYTES`] for it). Files in slot
    /// order (so live slots renumber densely and monotonically), terms and
    /// names sorted, dead slots dropped. A file whose chunks were never
    /// decoded since the load is copied as saved.
    ///
    /// With `parallel`, the terms table is built on another thread while
    /// this one streams the records out, and the forward table while this
    /// one builds and writes the names tables: each section is the same function
    /// of the index either way, and the sections still go out in order, so
    /// the bytes are those of the one-thread encoding (`tests.rs` compares
    /// them).
    pub(crate) fn encode(
        &self,
        out: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
        parallel: bool,
    ) -> std::io::Result<Vec<u8>> {
        let mut out = SectionWriter {
            out,
            section: 0,
            lens: [0; SECTIONS],
            crcs: (0..SECTIONS).map(|_| crc32fast::Hasher::new()).collect(),
        };
        let mut order: Vec<&FileEntry> = self.files.iter().flatten().collect();
        order.sort_by_key(|e| e.first_slot);
        // Each live slot's number in the snapshot (files in slot order,
        // each file's chunks in order), and the old slot of each new one.
        let mut remap: Vec<u32> = vec![DEAD; self.slots.len()];
        let mut old_slots: Vec<u32> = Vec::with_capacity(self.live as usize);
        for e in &order {
            for i in 0..e.chunk_count {
                let old = e.first_slot + i;
                if let Some(m) = remap.get_mut(old as usize) {
                    *m = old_slots.len() as u32;
                }
                old_slots.push(old);
            }
        }
        let mapped = |s: u32| {
            remap
                .get(s as usize)
                .copied()
                .filter(|&m| m != DEAD && self.is_live(s))
        };
        // The terms table, the largest to build, is built on another
        // thread while this one streams the records out; the others after
        // it, the forward table beside the names tables (each table is held
        // until written: building them all at once held 30 MB more at the
        // peak of a 16k-file build).
        let (terms, new_id) = if parallel {
            beside(
                "terms",
                || self.terms_table(&mapped),
                || self.encode_records(&order, &mut out),
            )?
            .0
        } else {
            self.encode_records(&order, &mut out)?;
            self.terms_table(&mapped)
        };
        terms.finish(&mut out, TERMS)?;
        let names = |out: &mut SectionWriter<'_>| -> std::io::Result<()> {
            self.names_table(|f| &f.defs, &self.defs, &mapped)
                .finish(out, DEFS)?;
            self.names_table(|f| &f.mentions, &self.edges.mentions, &mapped)
                .finish(out, MENTIONS)?;
            self.names_table(|f| &f.importers, &self.edges.importers, &mapped)
                .finish(out, IMPORTERS)
        };
        // The forward table (written last) is built on another thread
        // while this one builds and writes the names tables: the forward
        // table was held while they were built before too, so the peak
        // holds nothing more but the old-to-new term ids (4 bytes a term)
        // a little longer; this phase left a core idle for its whole
        // length (253 ms of a 6k-file build's save).
        let forward = if parallel {
            beside(
                "forward",
                || self.forward_table(&old_slots, &new_id),
                || names(&mut out),
            )?
            .0
        } else {
            let forward = self.forward_table(&old_slots, &new_id);
            drop(new_id);
            names(&mut out)?;
            forward
        };
        forward.finish(&mut out, FORWARD)?;
        Ok(out.directory())
    }

    /// The records, files, document lengths and chunk offsets sections of
    /// the files in `order` (slot order), streamed to `out`.
    fn encode_records(
        &self,
        order: &[&FileEntry],
        out: &mut SectionWriter<'_>,
    ) -> std::io::Result<()> {
        // Bytes of the records section already written out.
        let mut records_base = 0usize;
        let mut files = Writer::default();
        let mut records = Writer::default();
        let mut doc_lens = Writer::default();
        let mut chunk_at = Writer::default();
        files.len(order.len());
        for e in order {
            crate::codec::write_head(&mut files, &e.head);
            files.u32(e.chunk_count);
            if records.buf.len() >= RECORDS_FLUSH {
                out.put(RECORDS, &records.buf)?;
                records_base += records.buf.len();
                records.buf.clear();
            }
            let local = records.buf.len();
            let start = records_base + local;
            let crc = match (
                &e.packed,
                e.record.get(),
                e.saved.clone(),
                self.frozen.as_ref(),
            ) {
                // Upserted since the load: its records as encoded then.
                (Some(packed), _, _, _) => {
                    for at in packed.starts() {
                        chunk_at.u64((start + at) as u64);
                    }
                    records.raw(packed.bytes());
                    crc32(packed.bytes())
                }
                // Loaded, and decoded since.
                (None, Some(record), _, _) => {
                    records.len(record.chunks.len());
                    for c in &record.chunks {
                        chunk_at.u64((records_base + records.buf.len()) as u64);
                        crate::codec::write_chunk(&mut records, c, false);
                    }
                    crc32(records.buf.get(local..).unwrap_or(&[]))
                }
                (None, None, Some(range), Some(frozen)) => {
                    // Copied as saved: its chunks move by the same amount.
                    let old_start = range.start;
                    records.raw(frozen.section(RECORDS).get(range).unwrap_or(&[]));
                    for i in 0..e.chunk_count {
                        let at = frozen.chunk_at(e.first_slot + i).unwrap_or(old_start);
                        chunk_at.u64((at - old_start.min(at) + start) as u64);
                    }
                    // Its saved checksum, not a new one: bytes that no longer
                    // match it keep failing it (never laundered by a copy).
                    e.saved_crc
                }
                // Not reachable: a file is either upserted or loaded.
                (None, None, _, _) => {
                    crate::codec::write_chunks(&mut records, &[], false);
                    crc32(records.buf.get(local..).unwrap_or(&[]))
                }
            };
            files.u64(start as u64);
            files.u64((records.buf.len() - local) as u64);
            files.u32(crc);
            for i in 0..e.chunk_count {
                let old = e.first_slot + i;
                doc_lens.u32(self.doc_lens.get(old as usize).copied().unwrap_or(0));
            }
        }
        out.put(RECORDS, &records.buf)?;
        drop(records);
        out.put(FILES, &files.buf)?;
        out.put(DOC_LENS, &doc_lens.buf)?;
        out.put(CHUNK_AT, &chunk_at.buf)
    }

    /// The terms table (the saved terms, sorted, merged with those seen
    /// since; each with its postings in the new slot numbers) and every
    /// old term id's new one.
    fn terms_table(&self, mapped: &(dyn Fn(u32) -> Option<u32> + Sync)) -> (TableWriter, Vec<u32>) {
        let frozen_len = self.dict.frozen_len() as u32;
        // In term order, then id (ids are unique). Each id is sorted
        // behind its term's first bytes as an integer ([`prefix_key`]), so
        // that most comparisons of this serial sort are one integer
        // comparison instead of a `memcmp` call; the terms are looked up
        // only where the keys are equal. The entries hold no reference to
        // the term (16 bytes, not 32): on a cold build every term is new,
        // and this vector, held until the table is written, was most of
        // what the save added to the build's peak memory.
        let term_of = |id: u32| self.dict.term(id).unwrap_or_default();
        let mut tail: Vec<(u64, u32)> = (frozen_len..self.dict.len() as u32)
            .filter_map(|id| Some((prefix_key(self.dict.term(id)?.as_bytes()), id)))
            .collect();
        tail.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| term_of(a.1).cmp(term_of(b.1)))
                .then(a.1.cmp(&b.1))
        });
        let tail = tail.into_iter().map(|(_, id)| (term_of(id), id));
        let mut new_id: Vec<u32> = vec![DEAD; self.dict.len()];
        let mut terms = TableWriter::default();
        let mut list: Vec<(u32, u32)> = Vec::new();
        let mut slots_only: Vec<u32> = Vec::new();
        let mut saved = (0..frozen_len)
            .filter_map(|id| Some((self.dict.term(id)?, id)))
            .peekable();
        let mut since = tail.peekable();
        loop {
            let next = match (saved.peek(), since.peek()) {
                (Some(a), Some(b)) if a.0 <= b.0 => saved.next(),
                (Some(_), Some(_)) => since.next(),
                (Some(_), None) => saved.next(),
                (None, Some(_)) => since.next(),
                (None, None) => None,
            };
            let Some((term, id)) = next else { break };
            if self.df_of(id) == 0 {
                continue;
            }
            list.clear();
            list.extend(
                self.postings_of(id)
                    .filter_map(|(s, tf)| Some((mapped(s)?, tf))),
            );
            if list.is_empty() {
                continue;
            }
            new_id[id as usize] = terms.len() as u32;
            slots_only.clear();
            slots_only.extend(list.iter().map(|p| p.0));
            terms.push(term.as_bytes(), |w| {
                write_ascending(w, &slots_only, |w, i| w.varint(u64::from(list[i].1)));
            });
        }
        (terms, new_id)
    }

    /// Per new slot (`old_slots`: the old slot of each), its term ids in
    /// the new numbering.
    fn forward_table(&self, old_slots: &[u32], new_id: &[u32]) -> TableWriter {
        let mut forward = TableWriter::default();
        let mut ids: Vec<u32> = Vec::new();
        for &old in old_slots {
            ids.clear();
            ids.extend(
                self.slot_term_ids(old)
                    .into_iter()
                    .filter_map(|id| new_id.get(id as usize).copied().filter(|&n| n != DEAD)),
            );
            ids.sort_unstable();
            ids.dedup();
            forward.mark();
            write_ascending(&mut forward.data, &ids, |_, _| {});
        }
        forward
    }

    /// A names table (defs, mentions or importers): the saved one merged
    /// with the names linked since, each name's slots in the new numbers.
    ///
    /// The names of both are gathered in one vector, sorted by name with
    /// each name's [`prefix_key`] in front, and each name's slots read
    /// from its entries in a buffer reused from name to name. A B-tree of
    /// names (a `memcmp` call per comparison) and two vectors per name
    /// were most of this serial part of the save (issue 29).
    fn names_table(
        &self,
        which: fn(&Frozen) -> &frozen::Table,
        since: &HashMap<String, Vec<u32>>,
        mapped: &(dyn Fn(u32) -> Option<u32> + Sync),
    ) -> TableWriter {
        /// Where a name's slots are: a saved entry's payload or a list
        /// linked since.
        enum Slots<'a> {
            Saved(&'a [u8]),
            Since(&'a [u32]),
        }
        let mut names: Vec<(u64, &[u8], Slots<'_>)> = Vec::new();
        if let Some(f) = self.frozen.as_deref() {
            let table = which(f);
            names.reserve(table.len() + since.len());
            for i in 0..table.len() {
                if let Some((key, payload)) = f.entry(table, i) {
                    names.push((prefix_key(key), key, Slots::Saved(payload)));
                }
            }
        }
        names.extend(since.iter().map(|(name, slots)| {
            (
                prefix_key(name.as_bytes()),
                name.as_bytes(),
                Slots::Since(slots),
            )
        }));
        // Entries of one name are adjacent after this; their slots are
        // sorted below, so the order among them does not matter.
        names.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let mut table = TableWriter::default();
        let mut slots: Vec<u32> = Vec::new();
        let mut i = 0;
        while let Some(&(_, name, _)) = names.get(i) {
            slots.clear();
            while let Some((_, _, from)) = names.get(i).filter(|e| e.1 == name) {
                match from {
                    Slots::Saved(payload) => {
                        slots.extend(SlotList::new(payload).filter_map(mapped))
                    }
                    Slots::Since(list) => slots.extend(list.iter().copied().filter_map(mapped)),
                }
                i += 1;
            }
            slots.sort_unstable();
            slots.dedup();
            if !slots.is_empty() {
                table.push(name, |w| write_ascending(w, &slots, |_, _| {}));
            }
        }
        table
    }

    /// [`names_table`](Self::names_table) as it was written with a B-tree
    /// of names: the oracle of its test.
    #[cfg(test)]
    fn names_table_reference(
        &self,
        which: fn(&Frozen) -> &frozen::Table,
        since: &HashMap<String, Vec<u32>>,
        mapped: &(dyn Fn(u32) -> Option<u32> + Sync),
    ) -> TableWriter {
        let mut merged: std::collections::BTreeMap<&[u8], Vec<u32>> = Default::default();
        if let Some(f) = self.frozen.as_deref() {
            let table = which(f);
            for i in 0..table.len() {
                if let Some((key, payload)) = f.entry(table, i) {
                    merged
                        .entry(key)
                        .or_default()
                        .extend(SlotList::new(payload));
                }
            }
        }
        for (name, slots) in since {
            merged.entry(name.as_bytes()).or_default().extend(slots);
        }
        let mut table = TableWriter::default();
        for (name, slots) in merged {
            let mut slots: Vec<u32> = slots.into_iter().filter_map(mapped).collect();
            slots.sort_unstable();
            slots.dedup();
            if !slots.is_empty() {
                table.push(name, |w| write_ascending(w, &slots, |_, _| {}));
            }
        }
        table
    }

    /// [`encode`](Self::encode) into one buffer (compaction, tests).
    pub(crate) fn encode_to_vec(&self) -> Vec<u8> {
        let mut out = vec![0u8; frozen::DIRECTORY_BYTES];
        let directory = self.encode(
            &mut |bytes: &[u8]| {
                out.extend_from_slice(bytes);
                Ok(())
            },
            false,
        );
        // Writing into memory cannot fail, nor can the sections come out
        // of order (the order is fixed above); an empty payload is refused
        // by any open all the same.
        match directory {
            Ok(d) => out[..frozen::DIRECTORY_BYTES].copy_from_slice(&d),
            Err(_) => out.clear(),
        }
        out
    }

    /// Open a format 5 payload starting at `start` in `bytes`: checksums
    /// checked, the per-file table and the slot lengths decoded, everything
    /// else left in place. `None` on any inconsistency: the caller treats
    /// the index as untrusted.
    pub(crate) fn open(bytes: Arc<Backing>, start: usize) -> Option<Index> {
        let frozen = Arc::new(Frozen::open(bytes, start)?);
        let mut index = Index::default();
        let mut r = Reader::new(frozen.section(FILES));
        let records_len = frozen.section(RECORDS).len();
        let lens = frozen.section(DOC_LENS);
        let n_files = r.len_prefix()?;
        index.files.reserve(n_files);
        for file_no in 0..n_files {
            let head = crate::codec::read_head(&mut r)?;
            let chunk_count = r.u32()?;
            let off = usize::try_from(r.u64()?).ok()?;
            let len = usize::try_from(r.u64()?).ok()?;
            let saved_crc = r.u32()?;
            if off.checked_add(len)? > records_len {
                return None;
            }
            let first_slot = u32::try_from(index.slots.len()).ok()?;
            for ordinal in 0..chunk_count {
                let at = index.slots.len().checked_mul(4)?;
                let len = u32::from_le_bytes(lens.get(at..at + 4)?.try_into().ok()?);
                if len == DEAD {
                    return None;
                }
                index.slots.push(SlotRef {
                    file: file_no as u32,
                    ordinal,
                });
                index.doc_lens.push(len);
                index.total_len += u64::from(len);
            }
            if index
                .by_path
                .insert(Arc::from(head.rel_path.as_str()), file_no as u32)
                .is_some()
            {
                return None; // the same path twice
            }
            index.files.push(Some(FileEntry {
                head,
                record: OnceLock::new(),
                packed: None,
                saved: Some(off..off + len),
                saved_crc,
                intact: OnceLock::new(),
                chunk_count,
                first_slot,
                traits: OnceLock::new(),
            }));
        }
        let n_slots = index.slots.len();
        if !r.is_empty()
            || lens.len() != n_slots * 4
            || frozen.forward_len() != n_slots
            || frozen.section(CHUNK_AT).len() != n_slots * 8
        {
            return None;
        }
        index.saved_chunks = (0..n_slots).map(|_| OnceLock::new()).collect();
        index.live = u32::try_from(n_slots).ok()?;
        index.frozen_slots = index.live;
        index.dict = TermDict::frozen_from(Arc::clone(&frozen));
        index.frozen = Some(frozen);
        Some(index)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use contextgraph_types::Timestamp;

    use super::super::{build_chunk_records, Backing, FileRecord, Index};
    use super::prefix_key;
    use crate::lang::Language;

    fn rust_file(rel_path: &str, text: &str) -> FileRecord {
        let chunks = crate::chunk::chunk_file(rel_path, Language::Rust, text);
        FileRecord {
            rel_path: rel_path.to_owned(),
            content_hash: [rel_path.len() as u8; 32],
            size: text.len() as u64,
            mtime_ns: None,
            language: Language::Rust,
            skipped: None,
            chunks: build_chunk_records(text, chunks, None, Timestamp::from_unix(1, 0), None),
        }
    }

    /// The names tables (defs, mentions, importers) are written byte for
    /// byte as the B-tree merge wrote them: from a saved index with names
    /// linked since (some of them saved too, some files removed), with
    /// slots mapped to new numbers and some dropped.
    #[test]
    fn names_tables_are_the_merge_of_saved_and_new_names() {
        let a = "use crate::wire;\nfn alpha() { beta(); gamma(); }\nfn beta() -> Reply { Reply::new() }\n";
        let b = "use crate::net;\nstruct Reply;\nfn gamma() { alpha(); delta(); }\nfn abcdefghij() {}\n";
        let c = "use crate::wire;\nuse crate::zeta;\nfn alpha() { beta(); }\nfn abcdefghik() { abcdefghij(); }\nfn delta() -> Reply { gamma() }\n";
        let saved = Index::from_records([rust_file("src/a.rs", a), rust_file("src/b.rs", b)]);
        let Some(mut ix) = Index::open(Arc::new(Backing::Owned(saved.encode_to_vec())), 0) else {
            panic!("the saved index opens");
        };
        ix.upsert(rust_file("src/c.rs", c));
        ix.upsert(rust_file("src/d.rs", a));
        ix.remove("src/b.rs");
        assert!(ix.frozen.is_some() && !ix.defs.is_empty() && !ix.edges.mentions.is_empty());
        let maps: [&(dyn Fn(u32) -> Option<u32> + Sync); 2] =
            [&Some, &|s: u32| (s % 3 != 1).then_some(s * 2 + 1)];
        for mapped in maps {
            let tables = [
                (
                    ix.names_table(|f| &f.defs, &ix.defs, mapped),
                    ix.names_table_reference(|f| &f.defs, &ix.defs, mapped),
                ),
                (
                    ix.names_table(|f| &f.mentions, &ix.edges.mentions, mapped),
                    ix.names_table_reference(|f| &f.mentions, &ix.edges.mentions, mapped),
                ),
                (
                    ix.names_table(|f| &f.importers, &ix.edges.importers, mapped),
                    ix.names_table_reference(|f| &f.importers, &ix.edges.importers, mapped),
                ),
            ];
            for (i, (new, reference)) in tables.into_iter().enumerate() {
                assert!(reference.len() > 0, "table {i}");
                assert_eq!(new.head, reference.head, "table {i}");
                assert_eq!(new.data.buf, reference.data.buf, "table {i}");
            }
        }
    }

    /// Sorted with their prefix keys in front, strings come in the order
    /// they sort in alone: on strings sharing eight bytes and differing
    /// after, beginning one another, holding zero bytes and non-ASCII
    /// bytes, shorter and longer than the key.
    #[test]
    fn prefix_keys_keep_the_strings_order() {
        let mut words: Vec<Vec<u8>> = [
            "",
            "a",
            "a\0",
            "a\0\0",
            "a\0b",
            "ab",
            "abcdefg",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefghij",
            "abcdefgz",
            "abcdefh",
            "zz",
            "é",
            "ß",
            "\u{ff}",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let mut state = 7u64;
        for _ in 0..3000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (state >> 60) as usize;
            words.push(
                (0..len)
                    .map(|i| b"\0aby\xff"[(state >> (i * 3 % 40)) as usize % 5])
                    .collect(),
            );
        }
        let mut plain: Vec<(&[u8], u32)> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (&w[..], i as u32))
            .collect();
        plain.sort_unstable();
        let mut keyed: Vec<(u64, &[u8], u32)> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (prefix_key(w), &w[..], i as u32))
            .collect();
        keyed.sort_unstable();
        let keyed: Vec<(&[u8], u32)> = keyed.into_iter().map(|(_, w, i)| (w, i)).collect();
        assert_eq!(keyed, plain);
    }
}
