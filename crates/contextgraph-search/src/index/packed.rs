//! The chunk records of a file upserted since the load, held encoded: the
//! bytes a snapshot's records section holds for the file, decoded into a
//! [`FileRecord`](super::FileRecord) only when a query or a refresh reads
//! them.
//!
//! Why: a cold build holds every file's chunks until the snapshot is
//! written. Decoded, a chunk is a 384-byte record plus a heap string per
//! name, title, method, outline and edge (on a 5,966-file tree, about a
//! third of the build's peak heap); encoded it is its text and a few bytes
//! of lengths. The snapshot write then copies the bytes instead of
//! encoding the records.

use crate::codec::{read_chunks, write_chunk, Reader, Writer};

use super::ChunkRecord;

/// A file's chunk records in the snapshot's encoding (count, then each
/// record without terms), with where each record starts.
#[derive(Debug, Clone)]
pub(super) struct PackedChunks {
    bytes: Box<[u8]>,
    /// Per chunk, where its record starts in `bytes`.
    starts: Box<[u32]>,
}

impl PackedChunks {
    /// Encode `chunks` (their `terms` are not kept).
    pub(super) fn pack(chunks: &[ChunkRecord]) -> PackedChunks {
        let mut w = Writer::default();
        w.len(chunks.len());
        let mut starts = Vec::with_capacity(chunks.len());
        for c in chunks {
            starts.push(u32::try_from(w.buf.len()).unwrap_or(u32::MAX));
            write_chunk(&mut w, c, false);
        }
        PackedChunks {
            bytes: w.buf.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
        }
    }

    /// The encoded records, as a snapshot's records section holds them.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Where each chunk's record starts in [`bytes`](Self::bytes).
    pub(super) fn starts(&self) -> impl Iterator<Item = usize> + '_ {
        self.starts.iter().map(|&s| s as usize)
    }

    /// The records back (`terms` empty); `None` if the bytes do not hold
    /// exactly `count` records (not reachable: we encoded them).
    pub(super) fn unpack(&self, count: usize) -> Option<Vec<ChunkRecord>> {
        let mut r = Reader::new(&self.bytes);
        read_chunks(&mut r, false).filter(|c| r.is_empty() && c.len() == count)
    }
}
