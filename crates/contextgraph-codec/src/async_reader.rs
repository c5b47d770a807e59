//! Async line reader over [`tokio::io::AsyncRead`] (feature `tokio`).

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::framing::LineFramer;
use crate::reader::{record_read, step, FrameError, Step};

/// Yields the non-blank lines of an async byte stream, each capped in size.
///
/// The async twin of [`LineReader`](crate::LineReader), with the same
/// framing, the same recovery (an oversized line is one `Err` item followed by
/// the next line) and the same lending, allocation-free API.
///
/// [`next_line`](Self::next_line) is cancel-safe: if its future is dropped
/// (say, losing a `tokio::select!` to a timeout) no byte is lost, and the next
/// call carries on where it stopped.
#[derive(Debug)]
pub struct AsyncLineReader<R> {
    inner: R,
    framer: LineFramer,
    failed: bool,
}

impl<R: AsyncRead + Unpin> AsyncLineReader<R> {
    /// A reader capped at [`DEFAULT_MAX_LINE_BYTES`](crate::DEFAULT_MAX_LINE_BYTES).
    pub fn new(inner: R) -> Self {
        Self::with_framer(inner, LineFramer::default())
    }

    /// A reader using `framer`'s cap and read size.
    pub fn with_framer(inner: R, framer: LineFramer) -> Self {
        Self {
            inner,
            framer,
            failed: false,
        }
    }

    /// The next non-blank line without its terminator, or the reason the next
    /// line could not be delivered; `None` at end of input or after an I/O
    /// error.
    pub async fn next_line(&mut self) -> Option<Result<&[u8], FrameError>> {
        if self.failed {
            return None;
        }
        loop {
            match step(&mut self.framer) {
                Step::Line => return Some(Ok(self.framer.line())),
                Step::Error(e) => return Some(Err(e)),
                Step::End => return None,
                Step::Read => {}
            }
            // Cancel safety: `read` either completes, and its bytes are
            // committed before the next await, or reads nothing.
            let result = self.inner.read(self.framer.read_buf()).await;
            if let Some(e) = record_read(&mut self.framer, result) {
                self.failed = true;
                return Some(Err(FrameError::Io(e)));
            }
        }
    }

    /// The framer, e.g. to read its cap or account for its memory.
    pub fn framer(&self) -> &LineFramer {
        &self.framer
    }

    /// The underlying source.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The underlying source; bytes already buffered are dropped.
    pub fn into_inner(self) -> R {
        self.inner
    }
}
