//! One NDJSON session with a provider over any byte pipe pair: the handshake,
//! then requests routed to their replies.
//!
//! This layer owns the protocol mechanics and nothing else (no consent, no
//! audit): it guarantees that a reply is only ever delivered to the request
//! it answers, that every request ends by its deadline, and that nothing a
//! peer writes can wedge the session.
//!
//! # Correlated providers (H4)
//!
//! A provider that declared `correlation` is pipelined: up to
//! [`ConnectionOptions::max_in_flight`] queries are outstanding at once, each
//! carrying an id the host chose (`q<n>`), and each reply is routed by the
//! `id` it echoes. A reply whose id the host issued earlier but no longer
//! waits for (its request timed out) is a late reply and is dropped. A reply
//! with a missing id or an id the host never issued breaks H4: the host can
//! no longer tell which request it answers, so every outstanding request fails
//! at once with [`ConnectionError::Correlation`] (a prompt, typed error, not a
//! timeout) and the connection is closed for the embedder to restart.
//!
//! `verify` carries no id on the wire; its `verified` reply is matched by the
//! identities it echoes, so verifies are pipelined alongside queries.
//!
//! # Lock-step providers
//!
//! A provider without `correlation` is sent no ids and one request at a
//! time. Its replies are matched by order: the reader keeps a queue of the
//! requests sent and pops one per reply. A request that times out leaves its
//! slot in the queue, marked abandoned, so its late reply is consumed and
//! discarded instead of being taken as the answer to the next request. The
//! next request first waits (briefly, within its own deadline) for those owed
//! replies to drain; if they do not, the session is out of step, the request
//! fails with [`ConnectionError::Desynchronised`] and the connection is
//! closed so that the embedder restarts it rather than guess.
//!
//! # Noise
//!
//! Garbage lines, blank lines, oversized lines (dropped by the codec's line
//! cap without being buffered) and unknown envelope types are counted in
//! [`Diagnostics`] and otherwise ignored: none of them is a reply, so none
//! of them can be misattributed, kill the session or make a later request hang.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use contextgraph_codec::{
    decode_envelope, AsyncLineReader, DecodeError, Envelope, FrameError, LineFramer,
    DEFAULT_MAX_LINE_BYTES,
};
use contextgraph_types::{
    ContextQuery, ContextQueryResult, ErrorCode, FrameId, VerifyRequest, VerifyResponse,
    PROTOCOL_VERSION,
};
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{oneshot, Notify, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::{timeout_at, Instant};

use crate::handshake::{
    check_ack, error_instead_of_ack, HandshakeError, ProviderDescriptor, TransportKind,
};
use crate::line_watch::{LineWatch, OpenLine};
use crate::text::{excerpt, excerpt_bytes};

/// Bounds of one session. Build with [`ConnectionOptions::default`] and adjust fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConnectionOptions {
    /// Longest line accepted from the provider (default 16 MiB); longer lines
    /// are dropped unread, so host memory stays bounded by this plus one read.
    pub max_line_bytes: usize,
    /// Most requests outstanding at once to a correlated provider (default 64).
    pub max_in_flight: usize,
    /// How long the provider has to acknowledge the handshake (default 5 s).
    pub handshake_timeout: Duration,
    /// How long a lock-step request waits for late replies owed by earlier,
    /// timed-out requests before declaring the session out of step (default
    /// 200 ms, and never beyond the request's own deadline).
    pub resync_wait: Duration,
    /// How far past `max_line_bytes` one line may run before it is taken
    /// for a line that never ends (default 16 MiB). An oversized line that
    /// does end is dropped and the session carries on; one that runs past
    /// the cap plus this allowance, or is still running past the cap when a
    /// request's deadline passes, breaks the session (§1): its requests fail
    /// with [`ConnectionError::RunawayLine`] and a stdio provider is
    /// restarted per its respawn policy.
    pub runaway_line_bytes: usize,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_in_flight: 64,
            handshake_timeout: Duration::from_secs(5),
            resync_wait: Duration::from_millis(200),
            runaway_line_bytes: 16 * 1024 * 1024,
        }
    }
}

/// A provider's answer to one request, before any audit.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A `frames` reply.
    Frames(ContextQueryResult),
    /// A `verified` reply.
    Verified(VerifyResponse),
    /// An `error` reply.
    Error {
        /// The code as sent (absent is treated as `internal`, X2).
        code: Option<ErrorCode>,
        /// The message, shortened and escaped.
        message: String,
    },
}

/// Why a request got no answer. Each variant names the provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The deadline passed first.
    #[error("provider {provider}: no reply within the deadline ({after_ms} ms); the provider is slow or hung")]
    Timeout {
        /// The provider.
        provider: String,
        /// How long the request waited.
        after_ms: u128,
    },
    /// The session is closed: the provider exited, closed its output, or the
    /// host closed the session after a fault.
    #[error("provider {provider}: connection closed: {reason}")]
    Closed {
        /// The provider.
        provider: String,
        /// Why.
        reason: CloseReason,
    },
    /// A correlated provider answered with a missing or unknown id (H4).
    #[error("provider {provider}: H4: {detail}; the provider declared correlation but does not echo request ids, so its replies cannot be attributed — fix the provider or declare correlation: false")]
    Correlation {
        /// The provider.
        provider: String,
        /// What it sent.
        detail: String,
    },
    /// A lock-step provider still owes replies to timed-out requests, so the
    /// next reply cannot be trusted to answer the next request.
    #[error("provider {provider}: out of step: {owed} earlier request(s) timed out and their replies never arrived; restart the provider")]
    Desynchronised {
        /// The provider.
        provider: String,
        /// Replies still owed.
        owed: usize,
    },
    /// The reply could not be decoded.
    #[error("provider {provider}: R1: its reply is not a valid envelope: {detail}")]
    Malformed {
        /// The provider.
        provider: String,
        /// The decoder's reason.
        detail: String,
    },
    /// The provider wrote a line past the line cap that did not end (§1: one
    /// envelope per line), so nothing behind it can be read: the session is
    /// closed as broken rather than left wedged.
    #[error("provider {provider}: §1 line cap: it wrote a line of more than {line_bytes} bytes without a newline (the cap is {max_line_bytes}); the connection is broken and was closed and the provider will be restarted; a provider must keep each envelope under the cap (fix or report the provider: the cap is not configurable in cgp.toml)")]
    RunawayLine {
        /// The provider.
        provider: String,
        /// Bytes of the unfinished line when the session was closed.
        line_bytes: u64,
        /// The cap it ran past.
        max_line_bytes: usize,
    },
    /// The reply has the wrong type for the request (a `verified` for a query, …).
    #[error("provider {provider}: answered a {expected} request with a {got} envelope")]
    WrongReply {
        /// The provider.
        provider: String,
        /// The request type.
        expected: &'static str,
        /// The reply type received.
        got: String,
    },
}

/// Why a session closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CloseReason {
    /// The provider closed its output (it usually exited).
    #[error("the provider closed its output")]
    EndOfOutput,
    /// Reading or writing the pipes failed.
    #[error("I/O error: {0}")]
    Io(String),
    /// The host closed it after an H4 violation.
    #[error("closed after an H4 correlation violation")]
    CorrelationViolation,
    /// The host closed it because a lock-step session fell out of step.
    #[error("closed because the session fell out of step")]
    Desynchronised,
    /// The host shut it down.
    #[error("shut down by the host")]
    Shutdown,
    /// The provider wrote a line past the cap that never ended (§1).
    #[error("closed after the provider wrote a line past the line cap that did not end")]
    RunawayLine,
}

/// What the reader saw that was not a reply. All counters are cumulative.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Lines that were not JSON envelopes.
    pub garbage_lines: u64,
    /// Lines over the cap, dropped unread.
    pub oversized_lines: u64,
    /// Envelopes of a type this host does not know (ignored, §1).
    pub unknown_envelopes: u64,
    /// Replies to requests that had already timed out, discarded.
    pub late_replies: u64,
    /// Replies that matched no outstanding request, discarded.
    pub unattributable_replies: u64,
    /// The most recent notes (at most 16), shortened and escaped.
    pub recent: VecDeque<String>,
}

impl Diagnostics {
    const MAX_NOTES: usize = 16;

    fn note(&mut self, text: String) {
        if self.recent.len() == Self::MAX_NOTES {
            self.recent.pop_front();
        }
        self.recent.push_back(text);
    }
}

type Waiter = oneshot::Sender<Result<Answer, ConnectionError>>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Query,
    Verify,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Query => "query",
            Kind::Verify => "verify",
        }
    }
}

/// A lock-step request awaiting its reply, in send order.
struct Slot {
    token: u64,
    kind: Kind,
    /// `None` once the request timed out: its reply is owed but unwanted.
    waiter: Option<Waiter>,
}

/// A correlated-mode verify awaiting its `verified`, matched by identities.
struct PendingVerify {
    token: u64,
    ids: Vec<FrameId>,
    waiter: Waiter,
}

#[derive(Default)]
struct Router {
    /// Correlated queries by the number in their id.
    pending: HashMap<u64, Waiter>,
    /// Lock-step requests in send order.
    queue: VecDeque<Slot>,
    /// Correlated verifies, oldest first.
    verifies: VecDeque<PendingVerify>,
    closed: Option<CloseReason>,
    diag: Diagnostics,
    /// The largest query number ever issued: a reply naming one at or below
    /// it that nobody waits for is late, anything else was never sent.
    max_issued: u64,
}

struct Shared {
    provider: String,
    correlated: bool,
    /// Bytes of the line the reader is in the middle of.
    open_line: Arc<OpenLine>,
    max_line_bytes: usize,
    router: Mutex<Router>,
    /// Signalled whenever the lock-step queue becomes empty or the session closes.
    drained: Notify,
}

impl Shared {
    /// Close the session because a line ran away (§1), and the error its
    /// requests get.
    fn close_runaway(&self) -> ConnectionError {
        let error = ConnectionError::RunawayLine {
            provider: self.provider.clone(),
            line_bytes: self.open_line.bytes(),
            max_line_bytes: self.max_line_bytes,
        };
        self.close(CloseReason::RunawayLine, Some(error.clone()));
        error
    }

    /// Whether the reader is inside a line already past the cap.
    fn in_oversized_line(&self) -> bool {
        self.open_line.bytes() > self.max_line_bytes as u64
    }

    fn lock(&self) -> MutexGuard<'_, Router> {
        // A panic while holding the lock cannot leave the router in a state
        // worse than "some request missed its reply", which deadlines cover.
        self.router.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn closed_error(&self, reason: CloseReason) -> ConnectionError {
        ConnectionError::Closed {
            provider: self.provider.clone(),
            reason,
        }
    }

    /// Close the session: fail everything outstanding with `error_for(reason)`.
    fn close(&self, reason: CloseReason, error: Option<ConnectionError>) {
        let mut r = self.lock();
        if r.closed.is_some() {
            return;
        }
        r.closed = Some(reason.clone());
        let error = error.unwrap_or_else(|| self.closed_error(reason));
        let r = &mut *r;
        let waiters: Vec<Waiter> = r
            .pending
            .drain()
            .map(|(_, w)| w)
            .chain(r.queue.drain(..).filter_map(|s| s.waiter))
            .chain(r.verifies.drain(..).map(|v| v.waiter))
            .collect();
        for w in waiters {
            let _ = w.send(Err(error.clone()));
        }
        self.drained.notify_waiters();
    }
}

/// An open, handshaken session. Dropping it stops its reader and writer;
/// the process (if any) is the transport's to end.
pub struct Connection {
    descriptor: ProviderDescriptor,
    shared: Arc<Shared>,
    sink: Sink,
    in_flight: Semaphore,
    /// The permits `in_flight` started with.
    max_in_flight: usize,
    turn: tokio::sync::Mutex<()>,
    next: AtomicU64,
    options: ConnectionOptions,
    reader: JoinHandle<()>,
    writer: Option<JoinHandle<()>>,
}

type BoxWriter = BufWriter<Box<dyn AsyncWrite + Send + Unpin>>;

/// Where request lines go. A correlated session encodes each request
/// straight into a shared [`Outbox`] (no allocation, no channel per request):
/// a lone request is written by its caller at once, and requests that come
/// while a write is under way are batched by one writer task, so 64
/// pipelined requests cost a handful of writes; a lock-step session has one
/// request at a time, so the caller writes directly and saves a task hop
/// per round trip.
enum Sink {
    Outbox(Arc<Outbox>),
    Direct(tokio::sync::Mutex<BoxWriter>),
}

type DynWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// Request bytes on their way to a correlated provider.
///
/// Appending is synchronous (a request cannot be cancelled half-way through
/// its line), and bounded: at most [`ConnectionOptions::max_in_flight`]
/// requests are outstanding, each appends one line. Bytes reach the pipe in
/// the order they were appended, and only the holder of the write turn
/// ([`Turn`]) writes, so lines never interleave.
struct Outbox {
    state: Mutex<OutboxState>,
    /// The pipe. Locked only for one synchronous poll at a time, by the
    /// holder of the write turn, so it is never contended.
    writer: Mutex<DynWriter>,
    /// Wakes the writer task when the turn is handed to it.
    ready: Notify,
}

/// Who may write to the pipe.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// Nobody is writing and nothing is queued.
    Idle,
    /// A caller is trying a write that does not wait; others append to `buf`.
    Caller,
    /// The writer task owns the pipe until `buf` is empty.
    Writer,
}

struct OutboxState {
    /// Bytes queued behind the current write, in order.
    buf: Vec<u8>,
    /// A line buffer kept for a caller's immediate write.
    spare: Vec<u8>,
    turn: Turn,
    /// Write what is queued, then close the provider's input (R2).
    finish: bool,
}

impl Outbox {
    fn new(writer: DynWriter) -> Self {
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

    fn lock(&self) -> MutexGuard<'_, OutboxState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn writer(&self) -> MutexGuard<'_, DynWriter> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hand the turn to the writer task (the caller holds the state lock).
    fn hand_over(&self, s: &mut OutboxState) {
        s.turn = Turn::Writer;
        self.ready.notify_one();
    }

    /// Append one line, encoded in place. When `lone` (no other request is
    /// in flight) and the pipe is free, the line is written now, from the
    /// caller, sparing a wake-up of the writer task; whatever the pipe does
    /// not take at once is left to the writer task, so the caller never waits.
    fn push(&self, shared: &Shared, lone: bool, encode: impl FnOnce(&mut Vec<u8>)) {
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
    fn try_write(&self, line: &[u8]) -> std::io::Result<(usize, bool)> {
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
    fn finish(&self, line: &[u8]) {
        let mut s = self.lock();
        s.buf.extend_from_slice(line);
        s.finish = true;
        if s.turn == Turn::Idle {
            self.hand_over(&mut s);
        }
    }

    async fn write_all(&self, mut bytes: &[u8]) -> std::io::Result<()> {
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

    async fn flush(&self) -> std::io::Result<()> {
        std::future::poll_fn(|cx| Pin::new(&mut **self.writer()).poll_flush(cx)).await
    }

    async fn shutdown(&self) -> std::io::Result<()> {
        std::future::poll_fn(|cx| Pin::new(&mut **self.writer()).poll_shutdown(cx)).await
    }
}

fn write_error(e: &std::io::Error) -> CloseReason {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CloseReason::EndOfOutput
    } else {
        CloseReason::Io(e.to_string())
    }
}

/// Closes the session if a direct write is abandoned half-way (its deadline
/// passed while the pipe was full): a partial line would corrupt the stream.
struct WriteGuard<'a> {
    shared: &'a Shared,
    done: bool,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.shared.close(
                CloseReason::Io("a request was abandoned half-written at its deadline".into()),
                None,
            );
        }
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("provider", &self.descriptor.id)
            .field("correlated", &self.shared.correlated)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct QueryOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    query: &'a ContextQuery,
}

#[derive(Serialize)]
struct VerifyOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    request: &'a VerifyRequest,
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut line = Vec::with_capacity(256);
    encode_into(value, &mut line);
    line
}

/// Append `value` as one NDJSON line to `out`.
fn encode_into<T: Serialize>(value: &T, out: &mut Vec<u8>) {
    let start = out.len();
    // Serializing our own typed values into a Vec cannot fail: no map has
    // non-string keys and floats serialize (non-finite ones as null).
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"{}");
    }
    out.push(b'\n');
}

/// A correlated query's id, `q<n>`, serialized without building a String.
struct QueryId(u64);

impl Serialize for QueryId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("q{}", self.0))
    }
}

#[derive(Serialize)]
struct CorrelatedQueryOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: QueryId,
    query: &'a ContextQuery,
}

impl Connection {
    /// Handshake over `reader`/`writer` and start routing. `label` names the
    /// provider in errors until it has told its name; `transport` is recorded
    /// in the descriptor.
    ///
    /// No query payload moves before this returns `Ok` (H1).
    pub async fn open<R, W>(
        reader: R,
        writer: W,
        label: &str,
        transport: TransportKind,
        options: ConnectionOptions,
    ) -> Result<Connection, HandshakeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut writer = BufWriter::with_capacity(64 * 1024, writer);
        let runaway_limit = options
            .max_line_bytes
            .saturating_add(options.runaway_line_bytes) as u64;
        let mut lines = AsyncLineReader::with_framer(
            LineWatch::new(reader, runaway_limit),
            LineFramer::new(options.max_line_bytes),
        );
        let open_line = lines.get_ref().open_line();
        let io_error = |e: std::io::Error| HandshakeError::Io {
            provider: label.to_owned(),
            detail: e.to_string(),
        };
        let hello = encode(&Envelope::Handshake {
            protocol_version: PROTOCOL_VERSION.to_owned(),
        });
        let deadline = Instant::now() + options.handshake_timeout;
        let sent = timeout_at(deadline, async {
            writer.write_all(&hello).await?;
            writer.flush().await
        })
        .await;
        match sent {
            Err(_) => {
                return Err(HandshakeError::Timeout {
                    provider: label.to_owned(),
                    timeout_ms: options.handshake_timeout.as_millis(),
                    stderr_tail: String::new(),
                })
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                return Err(HandshakeError::Closed {
                    provider: label.to_owned(),
                    stderr_tail: String::new(),
                })
            }
            Ok(Err(e)) => return Err(io_error(e)),
            Ok(Ok(())) => {}
        }
        let first = timeout_at(deadline, async {
            match lines.next_line().await {
                None => Err(HandshakeError::Closed {
                    provider: label.to_owned(),
                    stderr_tail: String::new(),
                }),
                Some(Err(FrameError::Oversized {
                    discarded_bytes, ..
                })) => Err(HandshakeError::NotProtocol {
                    provider: label.to_owned(),
                    detail: format!("a line of {discarded_bytes} bytes, over the line cap"),
                    line: String::new(),
                }),
                Some(Err(_)) if open_line.tripped() => Err(HandshakeError::NotProtocol {
                    provider: label.to_owned(),
                    detail: format!(
                        "a line of more than {runaway_limit} bytes that does not end (§1)"
                    ),
                    line: String::new(),
                }),
                Some(Err(e)) => Err(HandshakeError::Io {
                    provider: label.to_owned(),
                    detail: e.to_string(),
                }),
                Some(Ok(line)) => Ok((decode_envelope(line), excerpt_bytes(line, 120))),
            }
        })
        .await
        .map_err(|_| HandshakeError::Timeout {
            provider: label.to_owned(),
            timeout_ms: options.handshake_timeout.as_millis(),
            stderr_tail: String::new(),
        })??;
        let descriptor = match first {
            (
                Ok(Envelope::HandshakeAck {
                    protocol_version,
                    provider,
                    capabilities,
                }),
                _,
            ) => check_ack(protocol_version, provider, capabilities, transport, label)?,
            (Ok(Envelope::Error { code, message, .. }), _) => {
                return Err(error_instead_of_ack(label, code, &message))
            }
            (Ok(other), line) => {
                return Err(HandshakeError::NotProtocol {
                    provider: label.to_owned(),
                    detail: format!("a {} envelope", excerpt(other.type_name(), 40)),
                    line,
                })
            }
            (Err(e), line) => {
                return Err(HandshakeError::NotProtocol {
                    provider: label.to_owned(),
                    detail: e.to_string(),
                    line,
                })
            }
        };
        Ok(Self::start(descriptor, lines, writer, options))
    }

    fn start<R, W>(
        descriptor: ProviderDescriptor,
        lines: AsyncLineReader<LineWatch<R>>,
        writer: BufWriter<W>,
        options: ConnectionOptions,
    ) -> Connection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let correlated = descriptor.capabilities.correlation;
        let max_in_flight = if correlated {
            options.max_in_flight.max(1)
        } else {
            1
        };
        let shared = Arc::new(Shared {
            provider: descriptor.id.clone(),
            correlated,
            open_line: lines.get_ref().open_line(),
            max_line_bytes: options.max_line_bytes,
            router: Mutex::new(Router::default()),
            drained: Notify::new(),
        });
        let reader = tokio::spawn(read_loop(lines, Arc::clone(&shared)));
        let (sink, writer) = if correlated {
            let outbox = Arc::new(Outbox::new(Box::new(writer.into_inner())));
            let task = tokio::spawn(write_loop(Arc::clone(&outbox), Arc::clone(&shared)));
            (Sink::Outbox(outbox), Some(task))
        } else {
            let boxed: Box<dyn AsyncWrite + Send + Unpin> = Box::new(writer.into_inner());
            let direct = BufWriter::with_capacity(64 * 1024, boxed);
            (Sink::Direct(tokio::sync::Mutex::new(direct)), None)
        };
        Connection {
            descriptor,
            shared,
            sink,
            in_flight: Semaphore::new(max_in_flight),
            max_in_flight,
            turn: tokio::sync::Mutex::new(()),
            next: AtomicU64::new(1),
            options,
            reader,
            writer,
        }
    }

    /// What the provider declared at the handshake.
    pub fn descriptor(&self) -> &ProviderDescriptor {
        &self.descriptor
    }

    /// Whether the session is closed (and why); a closed session answers
    /// every request with [`ConnectionError::Closed`] at once.
    pub fn closed(&self) -> Option<CloseReason> {
        self.shared.lock().closed.clone()
    }

    /// A snapshot of what the reader has seen besides replies.
    pub fn diagnostics(&self) -> Diagnostics {
        self.shared.lock().diag.clone()
    }

    fn timeout(&self, started: Instant) -> ConnectionError {
        ConnectionError::Timeout {
            provider: self.descriptor.id.clone(),
            after_ms: started.elapsed().as_millis(),
        }
    }

    /// Send `query` and wait, until `deadline`, for the reply that answers it.
    /// The id is sent only to a provider that declared correlation (H4).
    pub async fn query(
        &self,
        query: &ContextQuery,
        deadline: Instant,
    ) -> Result<Answer, ConnectionError> {
        if self.shared.correlated {
            self.correlated_query(query, deadline).await
        } else {
            self.lockstep(Kind::Query, deadline, |out| {
                encode_into(
                    &QueryOut {
                        kind: "query",
                        query,
                    },
                    out,
                )
            })
            .await
        }
    }

    /// Send a `verify` (identities only, V1) and wait for its `verified`.
    /// Pipelined with queries on a correlated provider.
    pub async fn verify(
        &self,
        request: &VerifyRequest,
        deadline: Instant,
    ) -> Result<Answer, ConnectionError> {
        let line = |out: &mut Vec<u8>| {
            encode_into(
                &VerifyOut {
                    kind: "verify",
                    request,
                },
                out,
            )
        };
        if !self.shared.correlated {
            return self.lockstep(Kind::Verify, deadline, line).await;
        }
        let started = Instant::now();
        let _permit = timeout_at(deadline, self.in_flight.acquire())
            .await
            .map_err(|_| self.timeout(started))?;
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut r = self.shared.lock();
            if let Some(reason) = &r.closed {
                return Err(self.shared.closed_error(reason.clone()));
            }
            r.verifies.push_back(PendingVerify {
                token,
                ids: request.frames.clone(),
                waiter: tx,
            });
        }
        self.send_and_wait(line, rx, deadline, started, |r| {
            r.verifies.retain(|v| v.token != token);
        })
        .await
    }

    async fn correlated_query(
        &self,
        query: &ContextQuery,
        deadline: Instant,
    ) -> Result<Answer, ConnectionError> {
        let started = Instant::now();
        let _permit = timeout_at(deadline, self.in_flight.acquire())
            .await
            .map_err(|_| self.timeout(started))?;
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let line = |out: &mut Vec<u8>| {
            encode_into(
                &CorrelatedQueryOut {
                    kind: "query",
                    id: QueryId(n),
                    query,
                },
                out,
            )
        };
        let (tx, rx) = oneshot::channel();
        {
            let mut r = self.shared.lock();
            if let Some(reason) = &r.closed {
                return Err(self.shared.closed_error(reason.clone()));
            }
            r.pending.insert(n, tx);
            r.max_issued = r.max_issued.max(n);
        }
        self.send_and_wait(line, rx, deadline, started, |r| {
            r.pending.remove(&n);
        })
        .await
    }

    async fn send_and_wait(
        &self,
        line: impl FnOnce(&mut Vec<u8>),
        rx: oneshot::Receiver<Result<Answer, ConnectionError>>,
        deadline: Instant,
        started: Instant,
        forget: impl FnOnce(&mut Router),
    ) -> Result<Answer, ConnectionError> {
        let sent = timeout_at(deadline, self.write(line)).await;
        let outcome = match sent {
            Err(_) => Err(self.timeout(started)),
            Ok(false) => Err(self.closed_now()),
            Ok(true) => match timeout_at(deadline, rx).await {
                // Stuck behind a line past the cap: the session is wedged,
                // not slow; break it so that it is restarted (§1).
                Err(_) if self.shared.in_oversized_line() => Err(self.shared.close_runaway()),
                Err(_) => Err(self.timeout(started)),
                Ok(Err(_)) => Err(self.closed_now()),
                Ok(Ok(answer)) => return answer,
            },
        };
        // The waiter is still registered (or its reply raced us and was
        // dropped with the receiver): forget it so a late reply is counted as
        // late, never delivered elsewhere.
        forget(&mut self.shared.lock());
        outcome
    }

    /// Write one line, encoded by `line`; false when the session is closed.
    async fn write(&self, line: impl FnOnce(&mut Vec<u8>)) -> bool {
        match &self.sink {
            Sink::Outbox(outbox) => {
                // Lone: the permit just taken is the only one out.
                let lone = self.in_flight.available_permits() + 1 >= self.max_in_flight;
                outbox.push(&self.shared, lone, line);
                true
            }
            Sink::Direct(writer) => {
                let mut bytes = Vec::with_capacity(256);
                line(&mut bytes);
                let line = bytes;
                let mut w = writer.lock().await;
                let mut guard = WriteGuard {
                    shared: &self.shared,
                    done: false,
                };
                let result = match w.write_all(&line).await {
                    Ok(()) => w.flush().await,
                    Err(e) => Err(e),
                };
                guard.done = true;
                if let Err(e) = result {
                    self.shared.close(write_error(&e), None);
                    return false;
                }
                true
            }
        }
    }

    fn closed_now(&self) -> ConnectionError {
        let reason = self
            .shared
            .lock()
            .closed
            .clone()
            .unwrap_or(CloseReason::EndOfOutput);
        self.shared.closed_error(reason)
    }

    async fn lockstep(
        &self,
        kind: Kind,
        deadline: Instant,
        line: impl FnOnce(&mut Vec<u8>),
    ) -> Result<Answer, ConnectionError> {
        let started = Instant::now();
        let _turn = timeout_at(deadline, self.turn.lock())
            .await
            .map_err(|_| self.timeout(started))?;
        self.wait_for_owed_replies(deadline).await?;
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut r = self.shared.lock();
            if let Some(reason) = &r.closed {
                return Err(self.shared.closed_error(reason.clone()));
            }
            r.queue.push_back(Slot {
                token,
                kind,
                waiter: Some(tx),
            });
        }
        self.send_and_wait(line, rx, deadline, started, |r| {
            // Keep the slot: its reply is still owed and must be consumed.
            if let Some(slot) = r.queue.iter_mut().find(|s| s.token == token) {
                slot.waiter = None;
            }
        })
        .await
    }

    /// Lock-step resynchronisation: wait until every reply owed to a
    /// timed-out request has arrived (and been discarded).
    async fn wait_for_owed_replies(&self, deadline: Instant) -> Result<(), ConnectionError> {
        let limit = deadline.min(Instant::now() + self.options.resync_wait);
        loop {
            let notified = self.shared.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let owed = {
                let r = self.shared.lock();
                if let Some(reason) = &r.closed {
                    return Err(self.shared.closed_error(reason.clone()));
                }
                r.queue.len()
            };
            if owed == 0 {
                return Ok(());
            }
            if timeout_at(limit, notified).await.is_err() {
                let error = ConnectionError::Desynchronised {
                    provider: self.descriptor.id.clone(),
                    owed,
                };
                self.shared
                    .close(CloseReason::Desynchronised, Some(error.clone()));
                return Err(error);
            }
        }
    }

    /// Send `shutdown` (R2) and close the session; outstanding requests fail.
    pub async fn shutdown(&self) {
        let line = encode(&Envelope::Shutdown);
        let _ = timeout_at(Instant::now() + Duration::from_millis(200), async {
            match &self.sink {
                Sink::Outbox(outbox) => outbox.finish(&line),
                Sink::Direct(writer) => {
                    let mut w = writer.lock().await;
                    let _ = w.write_all(&line).await;
                    let _ = w.flush().await;
                    // End of input too (R2: a provider also stops at EOF).
                    let _ = w.shutdown().await;
                }
            }
        })
        .await;
        self.shared.close(CloseReason::Shutdown, None);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.shared.close(CloseReason::Shutdown, None);
        self.reader.abort();
        if let Some(w) = &self.writer {
            w.abort();
        }
    }
}

/// The writer task of a correlated session: when handed the turn, writes
/// whatever requests accumulated in the outbox in one go (so concurrent
/// requests share a system call), until nothing is left, then gives the
/// turn back.
async fn write_loop(outbox: Arc<Outbox>, shared: Arc<Shared>) {
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

async fn read_loop<R: AsyncRead + Unpin>(
    mut lines: AsyncLineReader<LineWatch<R>>,
    shared: Arc<Shared>,
) {
    loop {
        match lines.next_line().await {
            None => {
                shared.close(CloseReason::EndOfOutput, None);
                return;
            }
            Some(Err(FrameError::Oversized {
                discarded_bytes, ..
            })) => {
                let mut r = shared.lock();
                r.diag.oversized_lines += 1;
                r.diag.note(format!(
                    "dropped a {discarded_bytes}-byte line over the cap"
                ));
            }
            Some(Err(_)) if shared.open_line.tripped() => {
                shared.close_runaway();
                return;
            }
            Some(Err(e)) => {
                shared.close(CloseReason::Io(e.to_string()), None);
                return;
            }
            Some(Ok(line)) => route(&shared, line),
        }
    }
}

/// What a decoded line means for routing.
enum Incoming {
    Reply {
        id: Option<String>,
        answer: Result<Answer, String>,
        type_name: Cow<'static, str>,
    },
    Noise,
}

fn classify(shared: &Shared, line: &[u8]) -> Incoming {
    let noise = |note: String, unknown: bool| {
        let mut r = shared.lock();
        if unknown {
            r.diag.unknown_envelopes += 1;
        } else {
            r.diag.garbage_lines += 1;
        }
        r.diag.note(note);
        Incoming::Noise
    };
    match decode_envelope(line) {
        Ok(Envelope::Frames { id, result }) => Incoming::Reply {
            id,
            answer: Ok(Answer::Frames(result)),
            type_name: Cow::Borrowed("frames"),
        },
        Ok(Envelope::Verified { response }) => Incoming::Reply {
            id: None,
            answer: Ok(Answer::Verified(response)),
            type_name: Cow::Borrowed("verified"),
        },
        Ok(Envelope::Error { id, code, message }) => Incoming::Reply {
            id,
            answer: Ok(Answer::Error {
                code,
                message: excerpt(&message, 1024),
            }),
            type_name: Cow::Borrowed("error"),
        },
        Ok(Envelope::Unknown { type_name, .. }) => noise(
            format!(
                "ignored an envelope of unknown type {:?}",
                excerpt(&type_name, 40)
            ),
            true,
        ),
        Ok(other) => noise(
            format!("ignored an unexpected {} envelope", other.type_name()),
            false,
        ),
        // A reply-typed envelope that does not decode still answers a request:
        // deliver the failure rather than let the request time out.
        Err(DecodeError::Malformed {
            type_name,
            id,
            reason,
        }) if matches!(type_name.as_str(), "frames" | "verified" | "error") => Incoming::Reply {
            id,
            answer: Err(excerpt(&reason, 512)),
            type_name: Cow::Owned(type_name),
        },
        Err(e) => noise(
            format!(
                "ignored a line that is not an envelope ({e}): {}",
                excerpt_bytes(line, 80)
            ),
            false,
        ),
    }
}

fn route(shared: &Shared, line: &[u8]) {
    let Incoming::Reply {
        id,
        answer,
        type_name,
    } = classify(shared, line)
    else {
        return;
    };
    let answer = answer.map_err(|detail| ConnectionError::Malformed {
        provider: shared.provider.clone(),
        detail,
    });
    if shared.correlated {
        route_correlated(shared, id, answer, &type_name);
    } else {
        route_lockstep(shared, answer, &type_name);
    }
}

fn route_lockstep(shared: &Shared, answer: Result<Answer, ConnectionError>, type_name: &str) {
    let mut r = shared.lock();
    let Some(slot) = r.queue.pop_front() else {
        r.diag.unattributable_replies += 1;
        r.diag.note(format!(
            "discarded a {type_name} reply no request was waiting for"
        ));
        return;
    };
    let drained = r.queue.is_empty();
    match slot.waiter {
        None => {
            r.diag.late_replies += 1;
            r.diag.note(format!(
                "discarded a late {type_name} reply to a timed-out request"
            ));
        }
        Some(waiter) => {
            drop(r);
            let answer = match (slot.kind, answer) {
                (Kind::Query, Ok(Answer::Verified(_))) | (Kind::Verify, Ok(Answer::Frames(_))) => {
                    Err(ConnectionError::WrongReply {
                        provider: shared.provider.clone(),
                        expected: slot.kind.name(),
                        got: type_name.to_owned(),
                    })
                }
                (_, other) => other,
            };
            let _ = waiter.send(answer);
            if drained {
                shared.drained.notify_waiters();
            }
            return;
        }
    }
    drop(r);
    if drained {
        shared.drained.notify_waiters();
    }
}

fn route_correlated(
    shared: &Shared,
    id: Option<String>,
    answer: Result<Answer, ConnectionError>,
    type_name: &str,
) {
    let mut r = shared.lock();
    if type_name == "verified" || (id.is_none() && type_name == "error" && !r.verifies.is_empty()) {
        let index = match &answer {
            Ok(Answer::Verified(resp)) => r.verifies.iter().position(|v| {
                resp.verdicts
                    .iter()
                    .all(|verdict| v.ids.contains(&verdict.frame))
            }),
            _ => (!r.verifies.is_empty()).then_some(0),
        };
        match index.and_then(|i| r.verifies.remove(i)) {
            Some(v) => {
                drop(r);
                let _ = v.waiter.send(answer);
            }
            None => {
                r.diag.unattributable_replies += 1;
                r.diag
                    .note("discarded a verified reply matching no outstanding verify".into());
            }
        }
        return;
    }
    let number = id
        .as_deref()
        .and_then(|s| s.strip_prefix('q'))
        .filter(|digits| !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse::<u64>().ok());
    if let Some(n) = number {
        if let Some(waiter) = r.pending.remove(&n) {
            drop(r);
            let _ = waiter.send(answer);
            return;
        }
        if n <= r.max_issued {
            r.diag.late_replies += 1;
            r.diag
                .note(format!("discarded a late {type_name} reply for q{n}"));
            return;
        }
    }
    drop(r);
    let detail = match id {
        None => format!("a {type_name} reply carried no id"),
        Some(id) => format!(
            "a {type_name} reply carried id {:?}, which this host never sent",
            excerpt(&id, 64)
        ),
    };
    let error = ConnectionError::Correlation {
        provider: shared.provider.clone(),
        detail,
    };
    shared.close(CloseReason::CorrelationViolation, Some(error));
}
