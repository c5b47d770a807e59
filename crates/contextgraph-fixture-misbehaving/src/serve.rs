//! The protocol loop over a byte stream, written directly on the codec
//! rather than on the SDK runner: the runner enforces honesty and protocol
//! hygiene, and several modes exist precisely to break those (wrong ids,
//! garbage lines, crashes, hangs, endless lines).
//!
//! Shape: the calling thread reads and dispatches envelopes in order; with
//! correlation declared, queries and verifies go to a small worker pool (so
//! several are in flight and replies may come back out of order); one writer
//! thread owns the output, so replies never interleave within a line.
//! Everything a peer controls is bounded: lines by the codec's 16 MiB cap,
//! in-flight work by the job queue, pending output by the reply queue (both
//! block the reader when full), error messages by [`MAX_MESSAGE_CHARS`].
//!
//! The wire-level modes are all here: `dropped-id`/`wrong-id`/`lockstep`
//! (ids, H4), `wrong-error-code` and `crash-on-garbage` (R1),
//! `crash-on-query`, `hang-on-shutdown` (R2), `slow-reply`, `stdout-log`,
//! `garbage-lines` and `endless-line`.

use std::io::{self, BufWriter, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use contextgraph_codec::{encode_line, Envelope, EnvelopeReader, FrameError, ReadError};
use contextgraph_types::display_text::bounded;
use contextgraph_types::{
    protocol_family, versions_compatible, ContextQuery, ErrorCode, VerifyRequest, PROTOCOL_VERSION,
};

use crate::engine::Engine;
use crate::lifecycle::Lifecycle;
use crate::mode::Mode;

/// Exit code of the crash modes.
pub const EXIT_CRASH: i32 = 3;

/// Exit code when stdin or stdout fails.
pub const EXIT_FAILURE: i32 = 1;

/// Longest error message written, in characters: messages quote peer input (a
/// version string, a parser's complaint), and a peer must not be able to
/// make a reply as large as its request.
pub const MAX_MESSAGE_CHARS: usize = 2048;

/// Worker threads serving correlated requests.
pub const WORKERS: usize = 4;

/// Requests queued for the workers before the reader stops reading.
const JOB_QUEUE: usize = 8;

/// Encoded replies queued for the writer before producers wait.
const REPLY_QUEUE: usize = 64;

/// What `wrong-id` appends to the request id it should have echoed.
pub const WRONG_ID_SUFFIX: &str = "-wrong";

/// What `stdout-log` prints on stdout before the handshake ack.
pub const STARTUP_LOG_LINE: &str = "starting up...";

/// The garbage line `garbage-lines` writes first: not JSON.
pub const GARBAGE_LINE: &str = "this is not an envelope {{{";

/// The unknown-type envelope `garbage-lines` writes last.
pub const PING_LINE: &str = "{\"type\":\"ping\"}";

/// Payload bytes of `garbage-lines`' oversized line: more than 17 MiB, past
/// any 16 MiB line cap.
pub const LONG_LINE_BYTES: usize = 17 * 1024 * 1024 + 1;

/// The bytes `endless-line` and the oversized garbage line are made of.
static FILLER_CHUNK: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// Pause between `endless-line` chunks: the line never ends either way, and
/// a pause keeps the spinner from hogging a shared machine's CPU.
const ENDLESS_PAUSE: Duration = Duration::from_millis(1);

/// How [`serve`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit the process with this code (0 after `shutdown` or end of input).
    Exit(i32),
    /// `hang-on-shutdown`: input ended, but the process must stay alive
    /// until it is killed.
    Hang,
}

/// Serve the protocol on `input`/`output` until `shutdown` or end of input.
///
/// The crash modes, and a failing output, end the process through
/// `lifecycle` (which deletes the scratch folder first) instead of returning.
pub fn serve<R, W>(
    input: R,
    output: W,
    engine: Arc<Engine>,
    delay: Duration,
    lifecycle: Arc<Lifecycle>,
) -> Outcome
where
    R: Read,
    W: Write + Send + 'static,
{
    let mode = engine.mode();
    let (out, queue) = mpsc::sync_channel(REPLY_QUEUE);
    let writer = {
        let lifecycle = Arc::clone(&lifecycle);
        thread::Builder::new()
            .name("cgp-writer".into())
            .spawn(move || write_loop(output, &queue, mode, &lifecycle))
    };
    let writer = match writer {
        Ok(handle) => handle,
        Err(e) => {
            eprintln!("{}: cannot start the writer thread: {e}", engine.name());
            return Outcome::Exit(EXIT_FAILURE);
        }
    };
    let wire = Wire { engine, out, delay };
    let pool = if mode.declares_correlation() {
        Pool::start(&wire)
    } else {
        // Lock-step: every request is answered on the reader thread, in order.
        None
    };
    let mut session = Session {
        wire,
        pool,
        handshaken: false,
        lifecycle,
    };
    let end = session.read_loop(input);
    session.finish();
    let _ = writer.join();
    match (end, mode) {
        (_, Mode::HangOnShutdown) => Outcome::Hang,
        (End::InputFailed, _) => Outcome::Exit(EXIT_FAILURE),
        (End::Shutdown | End::InputClosed, _) => Outcome::Exit(0),
    }
}

/// Why the read loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Shutdown,
    InputClosed,
    InputFailed,
}

/// What the reader does after one envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Shutdown,
}

/// Provider work taken off the reader thread.
enum Job {
    Query {
        reply_id: Option<String>,
        query: ContextQuery,
    },
    Verify(VerifyRequest),
}

/// What the writer is sent.
enum Outgoing {
    /// One encoded reply line (newline included).
    Reply(Vec<u8>),
    /// The encoded `handshake_ack` line: written clean, and from then on
    /// `garbage-lines` precedes every reply with its noise.
    Ack(Vec<u8>),
    /// Bytes that are not a reply (`stdout-log`): no garbage prelude.
    Raw(Vec<u8>),
    /// `endless-line`: write this prefix, then filler forever.
    Endless(Vec<u8>),
    /// Flush and stop.
    Close,
}

/// What producing a reply needs; cloned into every worker.
#[derive(Clone)]
struct Wire {
    engine: Arc<Engine>,
    out: SyncSender<Outgoing>,
    delay: Duration,
}

impl Wire {
    fn mode(&self) -> Mode {
        self.engine.mode()
    }

    /// H4: the id a reply carries. Echoed verbatim by a correlating provider;
    /// never sent by a lock-step one; broken by `dropped-id` and `wrong-id`.
    fn reply_id(&self, id: Option<String>) -> Option<String> {
        match self.mode() {
            Mode::Lockstep | Mode::DroppedId => None,
            Mode::WrongId => id.map(|id| format!("{id}{WRONG_ID_SUFFIX}")),
            _ => id,
        }
    }

    /// An error reply whose message names the provider and is bounded.
    /// `wrong-error-code` turns every `bad_request` into `internal`.
    fn error(&self, id: Option<String>, code: ErrorCode, text: &str) -> Envelope {
        let code = if code == ErrorCode::BadRequest && self.mode() == Mode::WrongErrorCode {
            ErrorCode::Internal
        } else {
            code
        };
        let message = format!("{}: {text}", self.engine.name());
        Envelope::error(id, code, bounded(&message, MAX_MESSAGE_CHARS))
    }

    /// Encode and queue one reply (after `slow-reply`'s delay). A send can
    /// only fail once the writer has gone, i.e. while the process is ending.
    fn send(&self, envelope: &Envelope) {
        self.send_as(envelope, Outgoing::Reply);
    }

    /// Queue the `handshake_ack`: never preceded by `garbage-lines`' noise,
    /// and it opens the session, after which replies are.
    fn send_ack(&self, envelope: &Envelope) {
        self.send_as(envelope, Outgoing::Ack);
    }

    fn send_as(&self, envelope: &Envelope, wrap: fn(Vec<u8>) -> Outgoing) {
        if self.mode() == Mode::SlowReply {
            thread::sleep(self.delay);
        }
        let line = encode_line(envelope).unwrap_or_else(|e| {
            let fallback = self.error(
                envelope.correlation_id().map(str::to_owned),
                ErrorCode::Internal,
                &format!("the reply could not be encoded as JSON ({e}); this is a bug in the misbehaving provider"),
            );
            encode_line(&fallback).unwrap_or_default()
        });
        let _ = self.out.send(wrap(line));
    }

    /// Run one job and queue its reply. A panic in the engine is answered
    /// as `internal` rather than taking the worker (and its replies) down.
    fn run(&self, job: Job) {
        match job {
            Job::Query { reply_id, query } => {
                if self.mode() == Mode::EndlessLine {
                    let _ = self
                        .out
                        .send(Outgoing::Endless(endless_prefix(reply_id.as_deref())));
                    return;
                }
                let reply = match catch_unwind(AssertUnwindSafe(|| self.engine.answer(&query))) {
                    Ok(Ok(result)) => Envelope::Frames {
                        id: reply_id,
                        result,
                    },
                    Ok(Err(e)) => self.error(reply_id, e.code, &e.message),
                    Err(_) => self.error(
                        reply_id,
                        ErrorCode::Internal,
                        "the query handler panicked; this is a bug in the misbehaving provider, report it with the query",
                    ),
                };
                self.send(&reply);
            }
            Job::Verify(request) => {
                let reply =
                    match catch_unwind(AssertUnwindSafe(|| self.engine.verify(&request))) {
                        Ok(response) => Envelope::Verified { response },
                        Err(_) => self.error(
                            None,
                            ErrorCode::Internal,
                            "the verify handler panicked; this is a bug in the misbehaving provider, report it with the request",
                        ),
                    };
                self.send(&reply);
            }
        }
    }
}

/// The start of `endless-line`'s reply: a `frames` envelope whose first
/// frame's title never ends.
fn endless_prefix(id: Option<&str>) -> Vec<u8> {
    let id = id
        .and_then(|id| serde_json::to_string(id).ok())
        .map(|quoted| format!("\"id\":{quoted},"))
        .unwrap_or_default();
    format!("{{\"type\":\"frames\",{id}\"result\":{{\"frames\":[{{\"id\":\"endless\",\"kind\":\"doc\",\"title\":\"")
        .into_bytes()
}

/// The reader side of one connection.
struct Session {
    wire: Wire,
    pool: Option<Pool>,
    /// No query payload is accepted before a compatible handshake.
    handshaken: bool,
    lifecycle: Arc<Lifecycle>,
}

impl Session {
    fn mode(&self) -> Mode {
        self.wire.mode()
    }

    fn read_loop<R: Read>(&mut self, input: R) -> End {
        let mut reader = EnvelopeReader::new(input);
        while let Some(item) = reader.next_envelope() {
            match item {
                Ok(envelope) => {
                    if self.dispatch(envelope) == Flow::Shutdown {
                        return End::Shutdown;
                    }
                }
                Err(e) if !e.is_recoverable() => {
                    eprintln!(
                        "{}: reading stdin failed ({e}); stopping",
                        self.wire.engine.name()
                    );
                    return End::InputFailed;
                }
                Err(e) => self.malformed(&e),
            }
        }
        End::InputClosed
    }

    /// R1: a line that is not an envelope gets `bad_request` (echoing its id
    /// when one could be read) and the session carries on.
    fn malformed(&self, e: &ReadError) {
        if self.mode() == Mode::CrashOnGarbage {
            eprintln!(
                "{}: crash-on-garbage: exiting on a malformed line ({e}), as this mode is meant to (it breaks R1)",
                self.wire.engine.name()
            );
            self.lifecycle.exit(EXIT_CRASH);
        }
        let (id, text) = match e {
            ReadError::Decode(d) => (
                d.id().map(str::to_owned),
                format!("R1: {d}; send one JSON envelope object per line"),
            ),
            ReadError::Frame(FrameError::Oversized {
                discarded_bytes,
                max,
            }) => (
                None,
                format!("R1: a line of {discarded_bytes} bytes exceeds this provider's {max}-byte line limit and was discarded; send smaller envelopes"),
            ),
            other => (None, format!("R1: {other}")),
        };
        let id = self.wire.reply_id(id);
        self.wire
            .send(&self.wire.error(id, ErrorCode::BadRequest, &text));
    }

    /// Handle one envelope; [`Flow::Shutdown`] stops reading.
    fn dispatch(&mut self, envelope: Envelope) -> Flow {
        match envelope {
            Envelope::Handshake { protocol_version } => self.handshake(&protocol_version),
            Envelope::Query { id, query } => {
                if self.mode() == Mode::CrashOnQuery {
                    eprintln!(
                        "{}: crash-on-query: exiting with code {EXIT_CRASH} on the first query, as this mode is meant to (it breaks R1)",
                        self.wire.engine.name()
                    );
                    self.lifecycle.exit(EXIT_CRASH);
                }
                let reply_id = self.wire.reply_id(id);
                if self.handshaken {
                    self.submit(Job::Query { reply_id, query });
                } else {
                    self.before_handshake(reply_id, "query");
                }
            }
            Envelope::Verify { request } => {
                if self.handshaken {
                    self.submit(Job::Verify(request));
                } else {
                    self.before_handshake(None, "verify");
                }
            }
            Envelope::Shutdown => {
                if self.mode() != Mode::HangOnShutdown {
                    return Flow::Shutdown;
                }
                eprintln!(
                    "{}: hang-on-shutdown: ignoring shutdown, as this mode is meant to (it breaks R2); kill the process to end it",
                    self.wire.engine.name()
                );
            }
            // A host's error needs no answer.
            Envelope::Error { .. } => {}
            Envelope::HandshakeAck { .. } | Envelope::Frames { .. } | Envelope::Verified { .. } => {
                let id = self
                    .wire
                    .reply_id(envelope.correlation_id().map(str::to_owned));
                let text = format!(
                    "R1: {} is sent by a provider to a host, not to a provider; send handshake, query, verify or shutdown",
                    envelope.type_name()
                );
                self.wire
                    .send(&self.wire.error(id, ErrorCode::BadRequest, &text));
            }
            Envelope::Unknown {
                type_name,
                id: Some(id),
            } => {
                let text = format!(
                    "R1: unknown envelope type {:?}; this provider serves handshake, query, verify and shutdown",
                    bounded(&type_name, 64)
                );
                let id = self.wire.reply_id(Some(id));
                self.wire
                    .send(&self.wire.error(id, ErrorCode::BadRequest, &text));
            }
            // §1: an unknown notification (no id) is ignored.
            Envelope::Unknown { id: None, .. } => {}
        }
        Flow::Continue
    }

    /// H1/H3: acknowledge a host of our major family, refuse any other by name.
    fn handshake(&mut self, host_version: &str) {
        if self.mode() == Mode::StdoutLog {
            let line = format!("{STARTUP_LOG_LINE}\n").into_bytes();
            let _ = self.wire.out.send(Outgoing::Raw(line));
        }
        if versions_compatible(host_version, PROTOCOL_VERSION) || self.mode() == Mode::AckOwnVersion
        {
            self.handshaken = true;
            self.wire.send_ack(&self.wire.engine.handshake_ack());
            return;
        }
        if self.mode() == Mode::EchoVersion {
            self.handshaken = true;
            let mut ack = self.wire.engine.handshake_ack();
            if let Envelope::HandshakeAck {
                protocol_version, ..
            } = &mut ack
            {
                *protocol_version = bounded(host_version, 64);
            }
            self.wire.send_ack(&ack);
            return;
        }
        let ours = protocol_family(PROTOCOL_VERSION).unwrap_or(PROTOCOL_VERSION);
        let shown = bounded(host_version, 64);
        let theirs = match protocol_family(host_version) {
            Some(family) => format!("the host speaks family {family} ({shown})"),
            None => format!("the host's version {shown:?} is not a protocol version (contextgraph/<major>.<minor>[-draft])"),
        };
        let text = format!(
            "H3: {theirs}, but this provider speaks family {ours} ({PROTOCOL_VERSION}); handshake again with a {ours}.x version or use another provider"
        );
        self.wire
            .send(&self.wire.error(None, ErrorCode::IncompatibleVersion, &text));
    }

    fn before_handshake(&self, id: Option<String>, what: &str) {
        let text = format!(
            "{what} before the handshake: send a handshake first (no query payload moves before a handshake_ack)"
        );
        self.wire
            .send(&self.wire.error(id, ErrorCode::BadRequest, &text));
    }

    fn submit(&self, job: Job) {
        match &self.pool {
            Some(pool) => pool.submit(job, &self.wire),
            None => self.wire.run(job),
        }
    }

    /// Let in-flight work finish, then flush and stop the writer.
    fn finish(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.finish();
        }
        let _ = self.wire.out.send(Outgoing::Close);
    }
}

/// The workers of a correlating provider.
struct Pool {
    jobs: Option<SyncSender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Start [`WORKERS`] workers; `None` (lock-step fallback) if no thread
    /// could be started.
    fn start(wire: &Wire) -> Option<Pool> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(JOB_QUEUE);
        let queue = Arc::new(Mutex::new(queue));
        let mut workers = Vec::with_capacity(WORKERS);
        let name = wire.engine.name().to_owned();
        for i in 0..WORKERS {
            let wire = wire.clone();
            let queue = Arc::clone(&queue);
            let spawned = thread::Builder::new()
                .name(format!("cgp-worker-{i}"))
                .spawn(move || work(&wire, &queue));
            match spawned {
                Ok(handle) => workers.push(handle),
                Err(e) => {
                    eprintln!("{name}: could not start worker {i}: {e}; serving with fewer workers")
                }
            }
        }
        if workers.is_empty() {
            return None;
        }
        Some(Pool {
            jobs: Some(jobs),
            workers,
        })
    }

    /// Queue a job (blocking while the queue is full: back-pressure on the
    /// reader). If every worker has died the job runs inline instead.
    fn submit(&self, job: Job, wire: &Wire) {
        let rejected = match &self.jobs {
            Some(jobs) => jobs.send(job).err().map(|e| e.0),
            None => Some(job),
        };
        if let Some(job) = rejected {
            wire.run(job);
        }
    }

    fn finish(mut self) {
        drop(self.jobs.take());
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

fn work(wire: &Wire, queue: &Mutex<Receiver<Job>>) {
    loop {
        let job = queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv();
        match job {
            Ok(job) => wire.run(job),
            Err(_) => return,
        }
    }
}

/// The writer thread: owns the output; a failed write means the host closed
/// the pipe, so the process ends (through `lifecycle`, which cleans up).
fn write_loop<W: Write>(output: W, queue: &Receiver<Outgoing>, mode: Mode, lifecycle: &Lifecycle) {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    if let Err(e) = pump(&mut out, queue, mode) {
        eprintln!(
            "{}: writing to stdout failed ({e}); the host has closed the pipe, exiting",
            lifecycle.name()
        );
        lifecycle.exit(EXIT_FAILURE);
    }
}

/// Write queued items, flushing whenever the queue is momentarily empty (a
/// lone reply never waits in a buffer; pipelined ones go out in batches).
///
/// `garbage-lines` noise goes only between post-handshake replies: a host
/// must survive noise on an open session, and noise before the ack is a
/// different fault (`stdout-log`'s), tested on its own.
fn pump<W: Write>(out: &mut W, queue: &Receiver<Outgoing>, mode: Mode) -> io::Result<()> {
    let mut acked = false;
    while let Ok(first) = queue.recv() {
        let mut next = Some(first);
        while let Some(item) = next.take() {
            match item {
                Outgoing::Reply(line) => {
                    if acked && mode == Mode::GarbageLines {
                        write_garbage(out)?;
                    }
                    out.write_all(&line)?;
                }
                Outgoing::Ack(line) => {
                    out.write_all(&line)?;
                    acked = true;
                }
                Outgoing::Raw(bytes) => out.write_all(&bytes)?,
                Outgoing::Endless(prefix) => {
                    out.write_all(&prefix)?;
                    loop {
                        out.write_all(&FILLER_CHUNK)?;
                        out.flush()?;
                        thread::sleep(ENDLESS_PAUSE);
                    }
                }
                Outgoing::Close => return out.flush(),
            }
            next = queue.try_recv().ok();
        }
        out.flush()?;
    }
    out.flush()
}

/// `garbage-lines`' prelude: a line that is not JSON, a blank line, a line
/// past any 16 MiB cap, and an unknown-type envelope.
fn write_garbage<W: Write>(out: &mut W) -> io::Result<()> {
    out.write_all(GARBAGE_LINE.as_bytes())?;
    out.write_all(b"\n\n")?;
    let mut left = LONG_LINE_BYTES;
    while left > 0 {
        let n = left.min(FILLER_CHUNK.len());
        out.write_all(&FILLER_CHUNK[..n])?;
        left -= n;
    }
    out.write_all(b"\n")?;
    out.write_all(PING_LINE.as_bytes())?;
    out.write_all(b"\n")
}
