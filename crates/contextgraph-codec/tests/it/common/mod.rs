//! Fixtures shared by the framing tests: a source that hands out input in
//! fixed-size pieces, drivers that collect what a framer reports, and a
//! reference model of the framing rules.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::io::{self, Read};

use contextgraph_codec::{FrameError, FrameEvent, LineFramer, LineReader};

/// One thing a framer reported, in an owned form tests can compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Line(Vec<u8>),
    Oversized(u64),
}

/// Shorthand for an expected line.
pub fn line(bytes: &[u8]) -> Item {
    Item::Line(bytes.to_vec())
}

/// A reader that returns at most `sizes[i % sizes.len()]` bytes on its i-th
/// read, so tests control exactly where input is cut.
pub struct ChunkedReader<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    reads: usize,
}

impl<'a> ChunkedReader<'a> {
    pub fn new(data: &'a [u8], sizes: &[usize]) -> Self {
        let sizes = sizes.iter().map(|&s| s.max(1)).collect::<Vec<_>>();
        Self {
            data,
            sizes: if sizes.is_empty() { vec![1] } else { sizes },
            reads: 0,
        }
    }

    /// Size of the next piece to hand out.
    pub fn next_size(&mut self) -> usize {
        let size = self.sizes[self.reads % self.sizes.len()];
        self.reads += 1;
        size
    }

    /// Takes up to `max` bytes of the next piece.
    pub fn next_piece(&mut self, max: usize) -> &'a [u8] {
        let n = self.next_size().min(max).min(self.data.len());
        let (piece, rest) = self.data.split_at(n);
        self.data = rest;
        piece
    }
}

impl Read for ChunkedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let piece = self.next_piece(buf.len());
        buf[..piece.len()].copy_from_slice(piece);
        Ok(piece.len())
    }
}

/// Drains a blocking reader; an I/O error fails the test.
pub fn collect<R: Read>(reader: &mut LineReader<R>) -> Vec<Item> {
    let mut items = Vec::new();
    while let Some(item) = reader.next_line() {
        match item {
            Ok(line) => items.push(Item::Line(line.to_vec())),
            Err(FrameError::Oversized {
                discarded_bytes, ..
            }) => items.push(Item::Oversized(discarded_bytes)),
            Err(other) => panic!("unexpected error: {other}"),
        }
    }
    items
}

/// Frames `input` through a [`LineReader`] reading pieces of `sizes` bytes.
pub fn frame_with_reader(input: &[u8], max: usize, sizes: &[usize]) -> Vec<Item> {
    let mut reader = LineReader::with_framer(
        ChunkedReader::new(input, sizes),
        LineFramer::new(max).with_read_chunk_bytes(8),
    );
    collect(&mut reader)
}

/// Frames `input` by driving the sans-IO [`LineFramer`] directly, committing
/// pieces of `sizes` bytes.
pub fn frame_sans_io(input: &[u8], max: usize, sizes: &[usize]) -> Vec<Item> {
    let mut framer = LineFramer::new(max).with_read_chunk_bytes(4);
    let mut source = ChunkedReader::new(input, sizes);
    let mut items = Vec::new();
    loop {
        match framer.next_event() {
            FrameEvent::Line => items.push(Item::Line(framer.line().to_vec())),
            FrameEvent::Oversized { discarded_bytes } => {
                items.push(Item::Oversized(discarded_bytes))
            }
            FrameEvent::End => return items,
            FrameEvent::NeedInput => {
                let space = framer.read_buf();
                let piece = source.next_piece(space.len());
                space[..piece.len()].copy_from_slice(piece);
                if piece.is_empty() {
                    framer.finish_input();
                } else {
                    framer.commit(piece.len());
                }
            }
            other => panic!("unexpected event {other:?}"),
        }
    }
}

/// The framing rules restated as obviously as possible: split at `\n`, strip
/// one trailing `\r`, reject payloads over `max`, skip blank lines.
pub fn reference(input: &[u8], max: usize) -> Vec<Item> {
    input
        .split(|&b| b == b'\n')
        .filter_map(|raw| {
            let payload = raw.strip_suffix(b"\r").unwrap_or(raw);
            if payload.len() > max {
                Some(Item::Oversized(payload.len() as u64))
            } else if payload.iter().all(|b| b" \t\r".contains(b)) {
                None
            } else {
                Some(Item::Line(payload.to_vec()))
            }
        })
        .collect()
}
