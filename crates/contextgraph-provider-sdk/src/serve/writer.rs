//! Encoding replies, and the shared output of a correlated session: replies
//! produced by concurrent workers never interleave within a line.

use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use contextgraph_codec::{encode_line, Envelope};
use contextgraph_types::ErrorCode;

/// Encode `envelope` as one line. Encoding is done by whoever produced the
/// reply (a worker, in parallel), outside the output lock.
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

/// The output of a correlated session, written by whichever thread has a
/// reply (a worker, or the reader for immediate replies) under one lock, so
/// lines never interleave and no reply waits for a hand-off to a writer
/// thread (on an idle machine, waking another thread costs as much as the
/// rest of a round trip).
///
/// Flushing: every writer counts itself in before taking the lock; the one
/// that counts the total back to zero flushes. A lone reply is therefore
/// flushed at once, and replies finished together share one flush.
pub(crate) struct SharedOutput {
    state: Mutex<OutputState>,
    /// Threads between "about to write" and "written".
    writing: AtomicUsize,
    /// Set on the first write error, so the reader can stop without locking.
    failed: AtomicBool,
}

struct OutputState {
    /// `None` once serving ended: the writer is dropped then (so the host
    /// sees the output end) even while a straggler still runs, and that
    /// straggler's late reply is dropped.
    out: Option<BufWriter<Box<dyn Write + Send>>>,
    /// The first write error; nothing is written after it.
    error: Option<io::Error>,
}

impl SharedOutput {
    pub(crate) fn new(output: impl Write + Send + 'static) -> Self {
        let boxed: Box<dyn Write + Send> = Box::new(output);
        SharedOutput {
            state: Mutex::new(OutputState {
                out: Some(BufWriter::with_capacity(64 * 1024, boxed)),
                error: None,
            }),
            writing: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, OutputState> {
        // Nothing panics while holding the lock but a writer's own `write`,
        // after which the state is still one of whole lines or an error.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Write one encoded line; `false` when the output is gone or closed.
    pub(crate) fn send(&self, line: &[u8]) -> bool {
        self.writing.fetch_add(1, Ordering::AcqRel);
        let mut state = self.lock();
        let last = self.writing.fetch_sub(1, Ordering::AcqRel) == 1;
        if state.error.is_some() {
            return false;
        }
        let Some(out) = state.out.as_mut() else {
            return false;
        };
        let written = out
            .write_all(line)
            .and_then(|()| if last { out.flush() } else { Ok(()) });
        match written {
            Ok(()) => true,
            Err(e) => {
                state.error = Some(e);
                self.failed.store(true, Ordering::Release);
                false
            }
        }
    }

    /// Whether a write has failed (the host stopped reading).
    pub(crate) fn gone(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Flush, drop the writer and refuse anything later; the first write
    /// error, if any.
    pub(crate) fn close(&self) -> io::Result<()> {
        let mut state = self.lock();
        let out = state.out.take();
        match (state.error.take(), out) {
            (Some(e), _) => Err(e),
            (None, Some(mut out)) => out.flush(),
            (None, None) => Ok(()),
        }
    }
}
