//! `cgp bridge mcp` start-up: the host may talk while the MCP server is
//! still initialising.
//!
//! The host spawned us and may send `shutdown` (or close stdin) before the
//! MCP server has answered `initialize`; it must not wait for that server
//! to give up. So stdin is read from the start by a pump thread, the
//! bridge connects on another, and whichever comes first wins: a
//! `shutdown` sent while the server is still initialising stops at once,
//! whatever came before it (a handshake waiting for its ack included); a
//! connected bridge is served with everything read so far replayed ahead
//! of the rest.
//!
//! The handshake is answered with the MCP server's identity, so it waits
//! for `initialize`. A server that is slow to start (the official Python
//! SDK's import alone takes seconds) is said to be so on stderr after
//! [`SLOW_START`], with what cgp is waiting for and for how long at most,
//! so a host that gives up first knows why.

use std::io::{BufRead, Read};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use contextgraph_mcp::{BridgeError, McpBridge};

/// How long start-up waits before saying the MCP server is slow.
pub const SLOW_START: Duration = Duration::from_secs(2);

/// What the start-up threads report.
pub enum Event {
    /// Bytes read from stdin.
    Input(Vec<u8>),
    /// Stdin ended (or failed).
    End,
    /// The bridge's `connect` finished.
    Connected(Box<Result<McpBridge, BridgeError>>),
}

/// How start-up ended.
pub enum Outcome {
    /// Serve this bridge, reading from this input.
    Connected(Box<McpBridge>, Input),
    /// The MCP server could not be started or initialised.
    Failed(BridgeError),
    /// The host sent `shutdown` or closed stdin first.
    Stopped,
}

/// The event channel, with the stdin pump already running.
pub struct Events {
    tx: mpsc::Sender<Event>,
    rx: mpsc::Receiver<Event>,
}

impl Events {
    /// Start pumping stdin.
    pub fn start() -> Self {
        let (tx, rx) = mpsc::channel();
        let pump = tx.clone();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let chunk = match stdin.fill_buf() {
                    Ok([]) | Err(_) => break,
                    Ok(buf) => buf.to_vec(),
                };
                stdin.consume(chunk.len());
                if pump.send(Event::Input(chunk)).is_err() {
                    return;
                }
            }
            let _ = pump.send(Event::End);
        });
        Events { tx, rx }
    }

    /// A sender for the connecting thread.
    pub fn sender(&self) -> mpsc::Sender<Event> {
        self.tx.clone()
    }

    /// Wait until the bridge connects or fails, or the host says stop: a
    /// `shutdown` ends start-up at once, even after other requests (their
    /// answers need the server, which the host no longer wants). The end of
    /// input is not a stop: the outcome of start-up is still reported.
    /// After [`SLOW_START`] without the server, say on stderr what is
    /// awaited: `command` answering `initialize`, for at most `limit`.
    pub fn wait_for_bridge(self, command: &str, limit: Duration) -> Outcome {
        let mut pending: Vec<u8> = Vec::new();
        let mut scanned = 0;
        let mut ended = false;
        let started = Instant::now();
        let mut told = false;
        loop {
            let event = match self.rx.recv_timeout(SLOW_START) {
                Ok(event) => event,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if !told {
                        told = true;
                        eprintln!(
                            "cgp bridge mcp: waiting for the MCP server {} to answer initialize \
                             ({} ms so far, at most {} ms: --timeout-ms); the handshake is \
                             answered once it has (the server's name and version are the \
                             provider's)",
                            crate::terminal::for_terminal(command),
                            started.elapsed().as_millis(),
                            limit.as_millis()
                        );
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match event {
                Event::Input(bytes) => {
                    pending.extend_from_slice(&bytes);
                    while let Some(nl) = pending[scanned..].iter().position(|b| *b == b'\n') {
                        let line = &pending[scanned..scanned + nl];
                        scanned += nl + 1;
                        if line.iter().all(u8::is_ascii_whitespace) {
                            continue;
                        }
                        if is_shutdown(line) {
                            return Outcome::Stopped;
                        }
                    }
                }
                Event::End => ended = true,
                Event::Connected(result) => {
                    return match *result {
                        Ok(bridge) => Outcome::Connected(
                            Box::new(bridge),
                            Input {
                                rx: self.rx,
                                buf: pending,
                                pos: 0,
                                ended,
                            },
                        ),
                        Err(e) => Outcome::Failed(e),
                    }
                }
            }
        }
        Outcome::Stopped
    }
}

/// Whether `line` is a CGP `shutdown` envelope.
fn is_shutdown(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .is_some_and(|v| v.get("type").and_then(serde_json::Value::as_str) == Some("shutdown"))
}

/// Stdin as the server reads it: what was read during start-up, then the rest.
pub struct Input {
    rx: mpsc::Receiver<Event>,
    buf: Vec<u8>,
    pos: usize,
    ended: bool,
}

impl Read for Input {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self.pos < self.buf.len() {
                let n = out.len().min(self.buf.len() - self.pos);
                out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.ended {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Event::Input(bytes)) => {
                    self.buf = bytes;
                    self.pos = 0;
                }
                Ok(Event::End) | Err(_) => self.ended = true,
                Ok(Event::Connected(_)) => {}
            }
        }
    }
}
