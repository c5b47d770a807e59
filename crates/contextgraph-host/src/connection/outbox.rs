//! The request side of a correlated session: lines appended to one outbox,
//! written by their caller when the pipe is free or batched by one writer
//! task when it is not.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::AsyncWrite;
use tokio::sync::Notify;

use super::router::Shared;
use super::CloseReason;

pub(super) type DynWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// Request bytes on their way to a correlated provider.
///
/// Appending is synchronous (a request cannot be cancelled half-way through
/// its line), and bounded: at most [`ConnectionOptions::max_in_flight`]
/// requests are outstanding, each appends one line. Bytes reach the pipe in
/// the order they were appended, and only the holder of the write turn
/// ([`Turn`]) writes, so lines never interleave.
pub(super) struct Outbox {
    pub(super) state: Mutex<OutboxState>,
    /// The pipe. Locked only for one synchronous poll at a time, by the
    /// holder of the write turn, so it is never contended.
    pub(super) writer: Mutex<DynWriter>,
    /// Wakes the writer task when the turn is handed to it.
    pub(super) ready: Notify,
}

/// Who may write to the pipe.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Turn {
    /// Nobody is writing and nothing is queued.
    Idle,
    /// A caller is trying a write that does not wait; others append to `buf`.
    Caller,
    /// The writer task owns the pipe until `buf` is empty.
    Writer,
}

pub(super) struct OutboxState {
    /// Bytes queued behind the current write, in order.
    pub(super) buf: Vec<u8>,
    /// A line buffer kept for a caller's immediate write.
    pub(super) spare: Vec<u8>,
    pub(super) turn: Turn,
    /// Write what is queued, then close the provider's input (R2).
    pub(super) finish: bool,
}

impl Outbox {
    pub(super) fn new(writer: DynWriter) -> Self {
        Outbox {
            state: Mutex::new(OutboxState {
                buf: Vec::with_capacity(64 * 1024),
                spare: Vec::with_capacity(1024),
                turn: Turn::Idle,
                finish: false,
            }),
            writer: Mutex::new(writer),
            ready: Notify::new(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, OutboxState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn writer(&self) -> MutexGuard<'_, DynWriter> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hand the turn to the writer task (the caller holds the state lock).
    pub(super) fn hand_over(&self, s: &mut OutboxState) {
        s.turn = Turn::Writer;
        self.ready.notify_one();
    }

    /// Append one line, encoded in place. When `lone` (no other request is
    /// in flight) and the pipe is free, the line is written now, from the
    /// caller, sparing a wake-up of the writer task; whatever the pipe does
    /// not take at once is left to the writer task, so the caller never waits.
    pub(super) fn push(&self, shared: &Shared, lone: bool, encode: impl FnOnce(&mut Vec<u8>)) {
        let mut line = {
            let mut s = self.lock();
            if !lone || s.turn != Turn::Idle {
                encode(&mut s.buf);
                if s.turn == Turn::Idle {
                    self.hand_over(&mut s);
                }
                return;
            }
            s.turn = Turn::Caller;
            let mut line = std::mem::take(&mut s.spare);
            line.clear();
            encode(&mut line);
            line
        };
        let tried = self.try_write(&line);
        let mut s = self.lock();
        match tried {
            Ok((written, true)) if written == line.len() => {
                if s.buf.is_empty() {
                    s.turn = Turn::Idle;
                } else {
                    self.hand_over(&mut s);
                }
            }
            Ok((written, _)) => {
                // The rest goes first: it was appended before anything queued since.
                s.buf.splice(0..0, line.drain(written..));
                self.hand_over(&mut s);
            }
            Err(e) => {
                // The session is over: nothing more is written after a
                // failed line; the writer task, handed the turn, fails the
                // same way, closes the provider's input and ends.
                s.buf.clear();
                self.hand_over(&mut s);
                drop(s);
                shared.close(write_error(&e), None);
                return;
            }
        }
        line.clear();
        if line.capacity() <= 64 * 1024 {
            s.spare = line;
        }
    }

    /// Write `line` as far as the pipe takes it without waiting: the bytes
    /// written, and whether they are also flushed.
    pub(super) fn try_write(&self, line: &[u8]) -> std::io::Result<(usize, bool)> {
        let mut cx = Context::from_waker(Waker::noop());
        let mut w = self.writer();
        let mut written = 0;
        while written < line.len() {
            match Pin::new(&mut **w).poll_write(&mut cx, &line[written..]) {
                Poll::Ready(Ok(0)) => return Err(std::io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => written += n,
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => return Ok((written, false)),
            }
        }
        match Pin::new(&mut **w).poll_flush(&mut cx) {
            Poll::Ready(Ok(())) => Ok((written, true)),
            Poll::Ready(Err(e)) => Err(e),
            Poll::Pending => Ok((written, false)),
        }
    }

    /// Queue `line` as the last one and close the provider's input after it (R2).
    pub(super) fn finish(&self, line: &[u8]) {
        let mut s = self.lock();
        s.buf.extend_from_slice(line);
        s.finish = true;
        if s.turn == Turn::Idle {
            self.hand_over(&mut s);
        }
    }

    pub(super) async fn write_all(&self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let n = std::future::poll_fn(|cx| Pin::new(&mut **self.writer()).poll_write(cx, bytes))
                .await?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            bytes = &bytes[n..];
        }
        Ok(())
    }

    pub(super) async fn flush(&self) -> std::io::Result<()> {
        std::future::poll_fn(|cx| Pin::new(&mut **self.writer()).poll_flush(cx)).await
    }

    pub(super) async fn shutdown(&self) -> std::io::Result<()> {
        std::future::poll_fn(|cx| Pin::new(&mut **self.writer()).poll_shutdown(cx)).await
    }
}

pub(super) fn write_error(e: &std::io::Error) -> CloseReason {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CloseReason::EndOfOutput
    } else {
        CloseReason::Io(e.to_string())
    }
}

/// The writer task of a correlated session: when handed the turn, writes
/// whatever requests accumulated in the outbox in one go (so concurrent
/// requests share a system call), until nothing is left, then gives the
/// turn back.
pub(super) async fn write_loop(outbox: Arc<Outbox>, shared: Arc<Shared>) {
    /// A batch buffer grown past this by a burst is not kept for reuse.
    const KEEP_BYTES: usize = 1 << 20;
    let mut batch = Vec::with_capacity(64 * 1024);
    loop {
        outbox.ready.notified().await;
        if outbox.lock().turn != Turn::Writer {
            continue;
        }
        loop {
            std::mem::swap(&mut outbox.lock().buf, &mut batch);
            let mut result = outbox.write_all(&batch).await;
            if result.is_ok() {
                result = outbox.flush().await;
            }
            if let Err(e) = result {
                shared.close(write_error(&e), None);
                return;
            }
            batch.clear();
            if batch.capacity() > KEEP_BYTES {
                batch = Vec::with_capacity(64 * 1024);
            }
            let finish = {
                let mut s = outbox.lock();
                if !s.buf.is_empty() {
                    continue;
                }
                s.turn = Turn::Idle;
                s.finish
            };
            if finish {
                // End of input too (R2: a provider also stops at EOF).
                let _ = outbox.shutdown().await;
                return;
            }
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    //! The outbox against an in-memory pipe: lines arrive whole and in the
    //! order they were appended, whether written by their caller or batched
    //! by the writer task, and a failed write closes the session.

    use super::*;
    use tokio::io::{duplex, AsyncReadExt};

    fn line(n: usize) -> Vec<u8> {
        format!("{{\"line\":{n},\"pad\":\"{}\"}}\n", "x".repeat(n % 7 * 5)).into_bytes()
    }

    #[tokio::test]
    async fn a_lone_line_is_written_by_its_caller_at_once() {
        let (ours, mut theirs) = duplex(4096);
        let outbox = Outbox::new(Box::new(ours));
        let shared = Shared::for_tests(true);
        outbox.push(&shared, true, |out| out.extend_from_slice(&line(1)));
        // No writer task exists: the caller wrote it.
        assert!(outbox.lock().turn == Turn::Idle);
        let mut got = vec![0; line(1).len()];
        theirs.read_exact(&mut got).await.unwrap();
        assert_eq!(got, line(1));
    }

    #[tokio::test]
    async fn lines_reach_the_pipe_whole_and_in_order_through_a_narrow_pipe() {
        // An 8-byte pipe: every caller write is partial, so the writer task
        // takes over with the rest of the line ahead of anything queued.
        let (ours, mut theirs) = duplex(8);
        let outbox = Arc::new(Outbox::new(Box::new(ours)));
        let shared = Arc::new(Shared::for_tests(true));
        let writer = tokio::spawn(write_loop(Arc::clone(&outbox), Arc::clone(&shared)));
        let mut expected = Vec::new();
        for n in 0..50 {
            expected.extend(line(n));
            outbox.push(&shared, n % 3 == 0, |out| out.extend_from_slice(&line(n)));
        }
        outbox.finish(b"{\"type\":\"shutdown\"}\n");
        expected.extend_from_slice(b"{\"type\":\"shutdown\"}\n");
        let mut got = Vec::new();
        // `finish` closes the provider's input after the last line: EOF.
        theirs.read_to_end(&mut got).await.unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(expected).unwrap()
        );
        writer.await.unwrap();
        assert!(shared.lock().closed.is_none());
    }

    #[tokio::test]
    async fn a_write_to_a_closed_pipe_closes_the_session() {
        let (ours, theirs) = duplex(64);
        drop(theirs);
        let outbox = Outbox::new(Box::new(ours));
        let shared = Shared::for_tests(true);
        outbox.push(&shared, true, |out| out.extend_from_slice(&line(1)));
        assert_eq!(shared.lock().closed, Some(CloseReason::EndOfOutput));
        assert!(
            outbox.lock().buf.is_empty(),
            "nothing more is written after a failed line"
        );
    }

    #[test]
    fn write_errors_name_why_the_session_ended() {
        let broken = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(write_error(&broken), CloseReason::EndOfOutput);
        let other = std::io::Error::other("disk on fire");
        assert_eq!(write_error(&other), CloseReason::Io("disk on fire".into()));
    }
}
