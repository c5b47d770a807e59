//! The single writer: one thread owns the output, so replies produced by
//! concurrent workers never interleave within a line.

use std::io::{self, BufWriter, Write};
use std::sync::mpsc::{Receiver, TryRecvError};

use contextgraph_codec::{encode_line, Envelope};
use contextgraph_types::ErrorCode;

/// What the writer is sent.
pub(crate) enum Outgoing {
    /// One encoded NDJSON line, newline included.
    Line(Vec<u8>),
    /// Flush and stop.
    Close,
}

/// Encode `envelope` as one line. Encoding is done by whoever produced the
/// reply (a worker, in parallel), not by the writer, which only copies bytes.
pub(crate) fn encode(envelope: &Envelope) -> Vec<u8> {
    encode_line(envelope).unwrap_or_else(|e| {
        let fallback = Envelope::error(
            envelope.correlation_id().map(str::to_owned),
            ErrorCode::Internal,
            format!("the reply could not be encoded as JSON ({e}); this is a provider bug"),
        );
        // An error envelope of plain strings always encodes.
        encode_line(&fallback).unwrap_or_else(|_| {
            b"{\"type\":\"error\",\"code\":\"internal\",\"message\":\"reply encoding failed\"}\n"
                .to_vec()
        })
    })
}

/// Write lines until [`Outgoing::Close`] (or every sender is gone), flushing
/// whenever the queue is momentarily empty: pipelined replies are written in
/// large batches, and a lone reply never waits in a buffer.
pub(crate) fn write_loop<W: Write>(output: W, queue: Receiver<Outgoing>) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    while let Ok(first) = queue.recv() {
        let mut next = Some(first);
        while let Some(item) = next.take() {
            match item {
                Outgoing::Line(bytes) => out.write_all(&bytes)?,
                Outgoing::Close => return out.flush(),
            }
            match queue.try_recv() {
                Ok(item) => next = Some(item),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => return out.flush(),
            }
        }
        out.flush()?;
    }
    out.flush()
}
