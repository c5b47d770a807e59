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

mod error;
mod open;
mod outbox;
mod reader;
mod router;
mod wire;

pub use error::{CloseReason, ConnectionError};
pub use reader::Diagnostics;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use contextgraph_codec::{Envelope, DEFAULT_MAX_LINE_BYTES};
use contextgraph_types::{
    ContextQuery, ContextQueryResult, ErrorCode, VerifyRequest, VerifyResponse,
};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{oneshot, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::{timeout_at, Instant};

use outbox::{write_error, Outbox};
use router::{Kind, PendingVerify, Router, Shared, Slot};
use wire::{encode, encode_into, CorrelatedQueryOut, QueryId, QueryOut, VerifyOut};

use crate::handshake::ProviderDescriptor;

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

impl Connection {
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
