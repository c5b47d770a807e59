//! Detection of a line that never ends (§1: one envelope per line).
//!
//! The codec's framer drops a line over the cap without buffering it and
//! carries on after its newline, so one oversized line costs nothing but the
//! bytes read. A line that never ends is different: nothing behind it can
//! ever be read, every request on the session is stuck until its deadline,
//! and the session looks alive forever, so it would never be restarted.
//!
//! [`LineWatch`] sits between the pipe and the framer and counts the bytes
//! of the line in progress (everything after the last `\n` seen). Once that
//! count passes the cap plus an allowance, the session is broken: the watch
//! delivers the bytes it already has (lines before the runaway one still
//! reach their requests), then fails the next read, and the connection
//! closes with [`CloseReason::RunawayLine`](crate::connection::CloseReason).
//! The count is shared, so a request whose deadline passes while an over-cap
//! line is in progress can break the session too instead of leaving it
//! wedged for the next request.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// Bytes of the line in progress, shared between the reader and requests.
#[derive(Debug, Default)]
pub(crate) struct OpenLine {
    bytes: AtomicU64,
    tripped: AtomicBool,
}

impl OpenLine {
    /// Payload bytes read so far of the line that has not ended yet.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Whether a line ran past the limit (the stream is failed from then on).
    pub(crate) fn tripped(&self) -> bool {
        self.tripped.load(Ordering::Relaxed)
    }
}

/// An [`AsyncRead`] that fails once one line runs past `limit` bytes.
#[derive(Debug)]
pub(crate) struct LineWatch<R> {
    inner: R,
    open: Arc<OpenLine>,
    limit: u64,
}

impl<R> LineWatch<R> {
    /// Watch `inner`; a line longer than `limit` bytes breaks the stream.
    pub(crate) fn new(inner: R, limit: u64) -> Self {
        LineWatch {
            inner,
            open: Arc::new(OpenLine::default()),
            limit,
        }
    }

    /// The shared count of the line in progress.
    pub(crate) fn open_line(&self) -> Arc<OpenLine> {
        Arc::clone(&self.open)
    }

    fn record(&mut self, fresh: &[u8]) {
        let open = match memchr::memrchr(b'\n', fresh) {
            Some(last) => (fresh.len() - last - 1) as u64,
            None => self.open.bytes().saturating_add(fresh.len() as u64),
        };
        self.open.bytes.store(open, Ordering::Relaxed);
        if open > self.limit {
            self.open.tripped.store(true, Ordering::Relaxed);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineWatch<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.open.tripped() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a line ran past {} bytes without a newline", this.limit),
            )));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let fresh = &buf.filled()[before..];
            if !fresh.is_empty() {
                this.record(fresh);
            }
        }
        polled
    }
}
