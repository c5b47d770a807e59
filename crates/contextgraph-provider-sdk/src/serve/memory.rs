//! An in-process byte pipe, so a provider can be served and talked to
//! without spawning anything (tests, benches, a host embedding a provider).
//!
//! Like an OS pipe it is bounded (a writer blocks when the reader lags),
//! dropping the writer is end of input for the reader, and writing after the
//! reader is gone fails with `BrokenPipe`.

use std::io::{self, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// How many writes may be buffered before a writer blocks.
const PIPE_CAPACITY_WRITES: usize = 64;

/// A connected pair: bytes written to the [`PipeWriter`] are read from the
/// [`PipeReader`], in order.
///
/// ```
/// use std::io::{Read, Write};
/// let (mut w, mut r) = contextgraph_provider_sdk::serve::memory::pipe();
/// w.write_all(b"{\"type\":\"shutdown\"}\n")?;
/// drop(w);
/// let mut text = String::new();
/// r.read_to_string(&mut text)?;
/// assert_eq!(text, "{\"type\":\"shutdown\"}\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn pipe() -> (PipeWriter, PipeReader) {
    let (tx, rx) = sync_channel(PIPE_CAPACITY_WRITES);
    (
        PipeWriter { tx },
        PipeReader {
            rx,
            chunk: Vec::new(),
            pos: 0,
        },
    )
}

/// The writing end of a [`pipe`].
#[derive(Debug, Clone)]
pub struct PipeWriter {
    tx: SyncSender<Vec<u8>>,
}

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.tx
            .send(buf.to_vec())
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the pipe's reader is gone"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The reading end of a [`pipe`].
#[derive(Debug)]
pub struct PipeReader {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.pos == self.chunk.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                // Every writer dropped: end of input.
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
