//! A provider as a child process on pipes.
//!
//! - stdout is read by a thread through the codec's capped [`LineReader`],
//!   so a line that never ends costs at most the cap, and every line becomes
//!   one [`Incoming`] on a bounded queue (a flooding provider blocks on its
//!   own pipe, not the suite's memory);
//! - stderr is drained by a thread into a bounded tail, so a chatty
//!   provider never blocks on a full stderr pipe;
//! - the process is killed when the channel is dropped, so no check leaves
//!   a provider running whatever path it ends on.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use contextgraph_codec::{decode_envelope, FrameError, LineFramer, LineReader};

use super::{Channel, ExitOutcome, Incoming, TargetError};
use crate::SuiteOptions;
use contextgraph_types::display_text::bounded_bytes;

/// Items queued from the reader thread before it stops reading.
const QUEUE: usize = 256;

/// How often the exit wait polls the child.
const EXIT_POLL: Duration = Duration::from_millis(5);

/// A spawned provider.
pub struct StdioChannel {
    child: Child,
    stdin: Option<ChildStdin>,
    items: Receiver<Incoming>,
    stderr: Arc<Mutex<Tail>>,
}

impl std::fmt::Debug for StdioChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioChannel")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

/// The last `cap` bytes of a stream, plus how many came before them.
#[derive(Debug)]
struct Tail {
    bytes: VecDeque<u8>,
    cap: usize,
    dropped: u64,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        for &b in chunk {
            if self.bytes.len() == self.cap {
                self.bytes.pop_front();
                self.dropped += 1;
            }
            self.bytes.push_back(b);
        }
    }
}

impl StdioChannel {
    /// Spawn `program args`, stdin/stdout/stderr piped.
    pub fn spawn(
        program: &Path,
        args: &[OsString],
        options: &SuiteOptions,
    ) -> Result<Self, TargetError> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| TargetError::Spawn {
                program: program.to_path_buf(),
                source,
            })?;
        let stdin = child.stdin.take();
        let (tx, items) = mpsc::sync_channel(QUEUE);
        if let Some(stdout) = child.stdout.take() {
            let max = options.max_line_bytes;
            let spawned = thread::Builder::new()
                .name("cgp-inspect-stdout".into())
                .spawn(move || read_stdout(stdout, max, &tx));
            if spawned.is_err() {
                let _ = child.kill();
                let _ = child.wait();
                return Err(TargetError::Spawn {
                    program: program.to_path_buf(),
                    source: std::io::Error::other("cannot start the stdout reader thread"),
                });
            }
        }
        let stderr = Arc::new(Mutex::new(Tail {
            bytes: VecDeque::new(),
            cap: options.stderr_tail_bytes.max(1),
            dropped: 0,
        }));
        if let Some(mut pipe) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            // Without the drain thread a chatty provider would block on a
            // full pipe; if it cannot start, stderr is simply not captured.
            let _ = thread::Builder::new()
                .name("cgp-inspect-stderr".into())
                .spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = pipe.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        if let Ok(mut t) = tail.lock() {
                            t.push(&buf[..n]);
                        }
                    }
                });
        }
        Ok(StdioChannel {
            child,
            stdin,
            items,
            stderr,
        })
    }
}

fn read_stdout(stdout: impl Read, max: usize, tx: &SyncSender<Incoming>) {
    let mut reader = LineReader::with_framer(stdout, LineFramer::new(max));
    while let Some(item) = reader.next_line() {
        let incoming = match item {
            Ok(line) => match decode_envelope(line) {
                Ok(env) => Incoming::Envelope(env),
                Err(e) => Incoming::BadLine {
                    start: bounded_bytes(line, 80),
                    reason: e.to_string(),
                },
            },
            Err(FrameError::Oversized {
                discarded_bytes, ..
            }) => Incoming::Oversized {
                bytes: discarded_bytes,
            },
            Err(_) => break,
        };
        if tx.send(incoming).is_err() {
            return;
        }
    }
    let _ = tx.send(Incoming::Closed);
}

impl Channel for StdioChannel {
    fn send(&mut self, line: &[u8]) -> Result<(), String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| "the provider's stdin is already closed".to_owned())?;
        let mut framed = Vec::with_capacity(line.len() + 1);
        framed.extend_from_slice(line);
        framed.push(b'\n');
        stdin
            .write_all(&framed)
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("writing to the provider's stdin failed ({e})"))
    }

    fn recv(&mut self, deadline: Instant) -> Option<Incoming> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.items.recv_timeout(wait) {
            Ok(item) => Some(item),
            Err(RecvTimeoutError::Timeout) => None,
            // The reader thread sends `Closed` before it goes; after that,
            // every further wait is for nothing.
            Err(RecvTimeoutError::Disconnected) => Some(Incoming::Closed),
        }
    }

    fn wait_exit(&mut self, grace: Duration) -> ExitOutcome {
        drop(self.stdin.take());
        let deadline = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return ExitOutcome::Exited(status.code()),
                Ok(None) if Instant::now() < deadline => thread::sleep(EXIT_POLL),
                _ => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        ExitOutcome::Killed
    }

    fn exited(&mut self) -> Option<Option<i32>> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.code()),
            _ => None,
        }
    }

    fn stderr_tail(&self) -> String {
        let Ok(t) = self.stderr.lock() else {
            return String::new();
        };
        let bytes: Vec<u8> = t.bytes.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes).trim().to_owned();
        if t.dropped > 0 {
            format!("(… {} earlier bytes) {text}", t.dropped)
        } else {
            text
        }
    }
}

impl Drop for StdioChannel {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}
