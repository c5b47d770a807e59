//! The runner: speaks the protocol over a byte stream so a provider author
//! only writes `query`.
//!
//! [`serve_stdio`] is what a provider binary's `main` calls; [`serve`] is
//! the same over any reader/writer pair (an in-memory [`memory::pipe`] in
//! tests). The protocol logic itself lives in [`Session`], which has no I/O,
//! so an HTTP server can reuse it one envelope at a time.
//!
//! # What the runner does for the author
//!
//! - **Handshake (H1, H3):** a host version in our major family gets a
//!   `handshake_ack` with [`PROTOCOL_VERSION`](contextgraph_types::PROTOCOL_VERSION),
//!   `info()` and `capabilities()`; any other version gets
//!   `incompatible_version` naming both families, and the connection stays
//!   open for another attempt. Queries and verifies before that get
//!   `bad_request` ("handshake first").
//! - **Queries:** checked for shape, F4 `as_of` and the E1 vector length
//!   before the provider sees them; answered with `frames`.
//! - **Correlation (H4):** a provider declaring `correlation` gets up to
//!   [`ServeOptions::max_in_flight`] requests outstanding, run concurrently
//!   on up to [`ServeOptions::max_workers`] threads, each reply echoing its
//!   request `id`; when the limit is reached the runner stops reading
//!   (backpressure) instead of queueing. A provider without it
//!   is served strictly in lock-step, in order, and its replies carry no `id`.
//! - **Honesty guard:** every answer is audited against its query
//!   ([`audit_answer`](crate::audit_answer)) before it is sent; a dishonest
//!   one is replaced by an `internal` error listing the broken rules.
//! - **Verify (V2):** refused with `bad_request` unless `capabilities.verify`;
//!   otherwise exactly one verdict per requested identity.
//! - **Robustness (R1):** malformed, oversized or unknown input gets
//!   `bad_request` (unknown notifications are ignored) and serving goes on; a
//!   panic in the author's code is answered as `internal`.
//! - **Teardown (R2):** `shutdown` or end of input stops reading, lets
//!   in-flight work finish within [`ServeOptions::shutdown_grace`], flushes,
//!   and returns `Ok(())`.
//!
//! A lock-step provider's replies are written and flushed by the reading
//! thread itself; a correlated provider's by whichever worker produced them,
//! under one lock, flushed by the last of the writers of a burst. No reply
//! waits for a hand-off to a writer thread.
//! Diagnostics go to stderr, never to the output.

pub mod memory;
mod pool;
mod session;
mod writer;

use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use contextgraph_codec::{Envelope, FrameError, LineFramer, LineReader, DEFAULT_MAX_LINE_BYTES};

use crate::provider::Provider;
use pool::{InFlight, Pool};
pub use session::{Dispatch, Job, Session};
use writer::{encode, SharedOutput};

/// How the runner serves. Build with [`ServeOptions::default`] and the
/// `with_*` methods.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeOptions {
    /// Most requests outstanding at once for a provider that declared
    /// correlation (default 64). Reading pauses while this many are in
    /// flight. Ignored in lock-step, where it is 1 by definition.
    pub max_in_flight: usize,
    /// Most worker threads running provider calls at once for a correlated
    /// provider (never more than `max_in_flight`; requests beyond it wait
    /// in the bounded queue). The default, the machine's parallelism but at
    /// least 4, suits providers that answer from memory or local files:
    /// threads beyond the cores only add switching (the runner bench halves
    /// its throughput with 64). Raise it for a provider whose `query` blocks
    /// on slow I/O, so that waiting calls do not hold up ready ones.
    pub max_workers: usize,
    /// How long `shutdown` or end of input waits for in-flight work before
    /// returning anyway (default 2 s). Work still running then is abandoned
    /// and its reply discarded.
    pub shutdown_grace: Duration,
    /// Audit every answer before sending it (default true). Turn off only
    /// in a provider that must be able to lie, e.g. a conformance test double.
    pub enforce_honesty: bool,
    /// Longest accepted input line in bytes (default 16 MiB); a longer one
    /// is discarded unread and answered with `bad_request`.
    pub max_line_bytes: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            max_in_flight: 64,
            max_workers: std::thread::available_parallelism().map_or(4, |n| n.get().max(4)),
            shutdown_grace: Duration::from_secs(2),
            enforce_honesty: true,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

impl ServeOptions {
    /// Set [`max_in_flight`](Self::max_in_flight) (at least 1).
    #[must_use]
    pub fn with_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.max_in_flight = max_in_flight.max(1);
        self
    }

    /// Set [`max_workers`](Self::max_workers) (at least 1).
    #[must_use]
    pub fn with_max_workers(mut self, max_workers: usize) -> Self {
        self.max_workers = max_workers.max(1);
        self
    }

    /// Set [`shutdown_grace`](Self::shutdown_grace).
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Set [`enforce_honesty`](Self::enforce_honesty).
    #[must_use]
    pub fn with_honesty(mut self, enforce: bool) -> Self {
        self.enforce_honesty = enforce;
        self
    }

    /// Set [`max_line_bytes`](Self::max_line_bytes).
    #[must_use]
    pub fn with_max_line_bytes(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }
}

/// Why serving stopped other than by `shutdown` or end of input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Reading requests failed. The host's end of the input is broken;
    /// in-flight work was still given its grace and flushed.
    #[error(
        "reading requests from the host failed: {0}; the host probably died, nothing to retry"
    )]
    Input(#[source] io::Error),
    /// Writing replies failed (typically the host closed its end).
    #[error("writing replies to the host failed: {0}; the host stopped reading, nothing to retry")]
    Output(#[source] io::Error),
}

/// Serve `provider` on stdin/stdout with default options until `shutdown`
/// or end of input. A provider binary is:
///
/// ```no_run
/// # use contextgraph_provider_sdk::{serve_stdio, Provider, ProviderError};
/// # use contextgraph_types::*;
/// # struct MyProvider;
/// # impl Provider for MyProvider {
/// #     fn info(&self) -> ProviderInfo { unimplemented!() }
/// #     fn capabilities(&self) -> Capabilities { unimplemented!() }
/// #     fn query(&self, _: &ContextQuery) -> Result<ContextQueryResult, ProviderError> { unimplemented!() }
/// # }
/// fn main() -> Result<(), contextgraph_provider_sdk::ServeError> {
///     serve_stdio(MyProvider)
/// }
/// ```
///
/// which exits 0 after a clean teardown (R2).
pub fn serve_stdio<P: Provider>(provider: P) -> Result<(), ServeError> {
    serve_stdio_with(provider, ServeOptions::default())
}

/// [`serve_stdio`] with explicit options.
pub fn serve_stdio_with<P: Provider>(provider: P, options: ServeOptions) -> Result<(), ServeError> {
    serve(provider, io::stdin(), io::stdout(), options)
}

/// Serve `provider` on `reader`/`writer` until `shutdown` or end of input.
///
/// The writer is owned (`'static`): a correlated provider's worker threads
/// write replies to it directly, and a worker still running after the
/// shutdown grace may outlive this call (its late reply is dropped).
pub fn serve<P: Provider>(
    provider: P,
    reader: impl Read,
    writer: impl Write + Send + 'static,
    options: ServeOptions,
) -> Result<(), ServeError> {
    let session = Arc::new(Session::new(provider).enforce_honesty(options.enforce_honesty));
    if options.enforce_honesty {
        let problems = session.self_check();
        if !problems.is_empty() {
            diag!(
                "{}: hosts will refuse or distrust this provider's handshake:",
                session.info().name
            );
            for v in &problems {
                diag!("  {v}");
            }
        }
    }
    let framer = LineFramer::new(options.max_line_bytes);
    let lines = LineReader::with_framer(reader, framer);
    if session.capabilities().correlation {
        serve_correlated(&session, lines, writer, &options)
    } else {
        serve_lockstep(&session, lines, writer)
    }
}

/// Lock-step: one request at a time, answered in order on the reading
/// thread, which also writes the reply and flushes it at once. No writer
/// thread: with a single producer there is nothing to serialise, and a
/// hand-off to another thread would add a wake-up to every round trip.
fn serve_lockstep<P: Provider, R: Read>(
    session: &Session<P>,
    lines: LineReader<R>,
    writer: impl Write,
) -> Result<(), ServeError> {
    let mut replies = DirectReplies {
        out: io::BufWriter::with_capacity(64 * 1024, writer),
        failed: None,
    };
    let ended = read_loop(session, lines, &mut replies, None);
    let written = match replies.failed.take() {
        Some(e) => Err(e),
        None => replies.out.flush(),
    };
    match ended {
        Ended::InputFailed(e) => Err(ServeError::Input(e)),
        Ended::Clean | Ended::OutputGone => written.map_err(ServeError::Output),
    }
}

/// Correlated: requests run concurrently on a worker pool; each reply is
/// written by the thread that produced it, under the output's lock.
fn serve_correlated<P: Provider, R: Read>(
    session: &Arc<Session<P>>,
    lines: LineReader<R>,
    writer: impl Write + Send + 'static,
    options: &ServeOptions,
) -> Result<(), ServeError> {
    let max_in_flight = options.max_in_flight.max(1);
    let output = Arc::new(SharedOutput::new(writer));
    let in_flight = Arc::new(InFlight::new(max_in_flight));
    let pool = Pool::new(
        Arc::clone(session),
        Arc::clone(&output),
        Arc::clone(&in_flight),
        options.max_workers.clamp(1, max_in_flight),
    );
    let mut replies = SharedReplies(&output);
    let ended = read_loop(session, lines, &mut replies, Some((&pool, &in_flight)));
    pool.close();
    let abandoned = in_flight.wait_idle(Instant::now() + options.shutdown_grace);
    if abandoned > 0 {
        diag!(
            "{}: {abandoned} request(s) still running after the {:?} shutdown grace; their replies are dropped",
            session.info().name,
            options.shutdown_grace
        );
    }
    // Every finished reply was written before its slot was freed; closing
    // flushes them and drops whatever a straggler sends later.
    let written = output.close();
    match ended {
        Ended::InputFailed(e) => Err(ServeError::Input(e)),
        Ended::Clean | Ended::OutputGone => written.map_err(ServeError::Output),
    }
}

/// Where the read loop's own replies go (immediate ones, and lock-step
/// answers).
trait Replies {
    /// Send one reply; `false` once the output is gone.
    fn send(&mut self, envelope: &Envelope) -> bool;
    /// Whether the output is known to be gone.
    fn gone(&self) -> bool;
}

/// Written and flushed by the calling thread (lock-step).
struct DirectReplies<W: Write> {
    out: io::BufWriter<W>,
    /// The first write error; nothing is written after it.
    failed: Option<io::Error>,
}

impl<W: Write> Replies for DirectReplies<W> {
    fn send(&mut self, envelope: &Envelope) -> bool {
        if self.failed.is_some() {
            return false;
        }
        let line = encode(envelope);
        match self.out.write_all(&line).and_then(|()| self.out.flush()) {
            Ok(()) => true,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }
    fn gone(&self) -> bool {
        self.failed.is_some()
    }
}

/// Written under the shared output's lock (correlated).
struct SharedReplies<'a>(&'a SharedOutput);

impl Replies for SharedReplies<'_> {
    fn send(&mut self, envelope: &Envelope) -> bool {
        self.0.send(&encode(envelope))
    }
    fn gone(&self) -> bool {
        self.0.gone()
    }
}

enum Ended {
    /// `shutdown` or end of input.
    Clean,
    /// The writer stopped; its error is the one reported.
    OutputGone,
    InputFailed(io::Error),
}

fn read_loop<P: Provider, R: Read>(
    session: &Session<P>,
    mut lines: LineReader<R>,
    replies: &mut impl Replies,
    pool: Option<(&Pool<P>, &InFlight)>,
) -> Ended {
    while let Some(item) = lines.next_line() {
        if replies.gone() {
            return Ended::OutputGone;
        }
        let dispatch = match item {
            Ok(line) => session.dispatch_line(line),
            Err(FrameError::Oversized {
                discarded_bytes,
                max,
            }) => Dispatch::Reply(session.oversized_line(discarded_bytes, max)),
            Err(FrameError::Io(e)) => return Ended::InputFailed(e),
            Err(other) => return Ended::InputFailed(io::Error::other(other.to_string())),
        };
        match dispatch {
            Dispatch::Reply(reply) => {
                if !replies.send(&reply) {
                    return Ended::OutputGone;
                }
            }
            Dispatch::Run(job) => match pool {
                Some((pool, in_flight)) => {
                    in_flight.acquire();
                    pool.submit(job);
                }
                // Lock-step: one request at a time, in order, on this thread.
                None => {
                    if !replies.send(&session.run(job)) {
                        return Ended::OutputGone;
                    }
                }
            },
            Dispatch::Ignore => {}
            Dispatch::Shutdown => return Ended::Clean,
        }
    }
    Ended::Clean
}
