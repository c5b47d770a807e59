//! Byte encoding shared by the snapshot and the journal: little-endian
//! fixed-width integers, LEB128 varints (postings), length-prefixed strings,
//! and the file/chunk metadata records. Every read is bounds-checked and
//! returns `None` on malformed input, so a corrupt cache can never panic or
//! drive an allocation larger than the bytes present.

use contextgraph_types::Timestamp;

use crate::chunk::{ChunkKind, ImportRef, SymbolInfo};
use crate::index::{ChunkRecord, FileRecord};
use crate::lang::Language;
use crate::walk::SkipReason;

#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

/// Append `v` to `buf` as a LEB128 varint.
pub(crate) fn push_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

impl Writer {
    /// LEB128 varint (postings deltas and term frequencies).
    pub(crate) fn varint(&mut self, v: u64) {
        push_varint(&mut self.buf, v);
    }
    pub(crate) fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.raw(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.raw(&v.to_le_bytes());
    }
    pub(crate) fn i64(&mut self, v: i64) {
        self.raw(&v.to_le_bytes());
    }
    pub(crate) fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.raw(b);
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    pub(crate) fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    pub(crate) fn strs(&mut self, v: &[String]) {
        self.len(v.len());
        for s in v {
            self.str(s);
        }
    }
    pub(crate) fn ts(&mut self, t: Timestamp) {
        self.i64(t.unix_seconds());
        self.u32(t.subsec_nanos());
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// LEB128 varint; `None` when truncated or longer than 10 bytes.
    pub(crate) fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    /// A varint count, refused when it exceeds the bytes left.
    pub(crate) fn varint_len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.buf.len()).then_some(n)
    }
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// Bytes left.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len()
    }
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.buf.len() {
            return None;
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Some(a)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    }
    pub(crate) fn i64(&mut self) -> Option<i64> {
        self.take(8)
            .and_then(|b| b.try_into().ok())
            .map(i64::from_le_bytes)
    }
    pub(crate) fn array32(&mut self) -> Option<[u8; 32]> {
        self.take(32).and_then(|b| b.try_into().ok())
    }
    /// A count, refused when it exceeds the bytes left (each item takes at
    /// least one byte), so a corrupt count cannot drive a huge allocation.
    pub(crate) fn len_prefix(&mut self) -> Option<usize> {
        let n = self.u32()? as usize;
        (n <= self.buf.len()).then_some(n)
    }
    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    pub(crate) fn str(&mut self) -> Option<&'a str> {
        self.bytes().and_then(|b| std::str::from_utf8(b).ok())
    }
    pub(crate) fn string(&mut self) -> Option<String> {
        self.str().map(str::to_owned)
    }
    pub(crate) fn opt_string(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.string().map(Some),
            _ => None,
        }
    }
    pub(crate) fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.len_prefix()?;
        (0..n).map(|_| self.string()).collect()
    }
    pub(crate) fn ts(&mut self) -> Option<Timestamp> {
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

pub(crate) fn write_file(w: &mut Writer, f: &FileRecord, with_terms: bool) {
    write_head(w, f);
    write_chunks(w, &f.chunks, with_terms);
}

/// A record's file-level fields (path, hash, size, time, language, gate):
/// what a snapshot keeps decoded in memory for every file.
pub(crate) fn write_head(w: &mut Writer, f: &FileRecord) {
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
}

/// A file's chunk records (the part of a record a snapshot keeps apart,
/// decoded only when a query or a refresh touches the file).
pub(crate) fn write_chunks(w: &mut Writer, chunks: &[ChunkRecord], with_terms: bool) {
    w.len(chunks.len());
    for c in chunks {
        write_chunk(w, c, with_terms);
    }
}

/// One chunk record (a snapshot finds each by its offset, so that a query
/// decodes the chunks it ranks, not their files).
pub(crate) fn write_chunk(w: &mut Writer, c: &ChunkRecord, with_terms: bool) {
    w.u8(kind_tag(c.kind));
    w.str(&c.local_id);
    w.str(&c.title);
    match &c.symbol {
        Some(s) => {
            w.u8(1);
            w.str(&s.name);
            w.str(&s.qualified);
            w.str(&s.kind_label);
            w.str(&c.symbol_tokens);
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
    if with_terms {
        w.len(c.terms.len());
        for (t, n) in c.terms.iter() {
            w.str(t);
            w.u32(n);
        }
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

pub(crate) fn read_file(r: &mut Reader<'_>, with_terms: bool) -> Option<FileRecord> {
    let mut record = read_head(r)?;
    record.chunks = read_chunks(r, with_terms)?;
    Some(record)
}

/// The fields [`write_head`] wrote, as a record without chunks.
pub(crate) fn read_head(r: &mut Reader<'_>) -> Option<FileRecord> {
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
    Some(FileRecord {
        rel_path,
        content_hash,
        size,
        mtime_ns,
        language,
        skipped,
        chunks: Vec::new(),
    })
}

/// The chunk records [`write_chunks`] wrote.
pub(crate) fn read_chunks(r: &mut Reader<'_>, with_terms: bool) -> Option<Vec<ChunkRecord>> {
    let n = r.len_prefix()?;
    let mut chunks = Vec::with_capacity(n);
    for _ in 0..n {
        chunks.push(read_chunk(r, with_terms)?);
    }
    Some(chunks)
}

/// The chunk record [`write_chunk`] wrote.
pub(crate) fn read_chunk(r: &mut Reader<'_>, with_terms: bool) -> Option<ChunkRecord> {
    let kind = kind_from(r.u8()?)?;
    let local_id = r.string()?;
    let title = r.string()?;
    let (symbol, symbol_tokens) = match r.u8()? {
        0 => (None, String::new()),
        1 => (
            Some(SymbolInfo {
                name: r.string()?,
                qualified: r.string()?,
                kind_label: r.string()?,
            }),
            r.string()?,
        ),
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
    let mut terms = Vec::new();
    if with_terms {
        let tn = r.len_prefix()?;
        terms.reserve(tn);
        for _ in 0..tn {
            terms.push((r.string()?, r.u32()?));
        }
    }
    let terms = crate::tokenize::TermCounts::from_pairs(terms);
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
    Some(ChunkRecord {
        kind,
        local_id,
        title,
        symbol,
        symbol_tokens,
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
    })
}
