//! A provider process on real pipes, as a host would drive it: every line
//! it sends is parsed and checked against the wire JSON Schema (ours, and the
//! shared one when present) before the test sees it. Used by the docs
//! provider's tests and by `cgp serve docs`'s, so both binaries are driven by
//! the same harness.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use contextgraph_types::ContextQueryResult;
use serde_json::{json, Value};

/// How long a test waits for one reply before declaring the provider hung.
/// A hang guard, not a speed assertion: generous on a noisy shared machine.
pub const REPLY_DEADLINE: Duration = Duration::from_secs(30);

/// R2 asks for an exit "within a couple of seconds" of `shutdown`; allow a
/// loaded machine some slack on top.
pub const EXIT_DEADLINE: Duration = Duration::from_secs(5);

/// A query envelope's `query` member.
pub fn query(goal: &str, max_frames: u32, max_tokens: u32) -> Value {
    json!({"goal": goal, "max_frames": max_frames, "max_tokens": max_tokens})
}

/// A provider process on real pipes.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Session {
    /// Spawn `program args…` with piped stdin/stdout (stderr inherited, so a
    /// failing test shows the provider's own complaints).
    pub fn spawn<I, S>(program: impl AsRef<OsStr>, args: I) -> Session
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the provider");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(line) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
        }
    }

    /// Send one raw line (a newline is appended).
    pub fn send_line(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// Send raw bytes, exactly as given.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).expect("write to the provider");
        stdin.flush().expect("flush to the provider");
    }

    /// Send one envelope.
    pub fn send(&mut self, envelope: &Value) {
        self.send_line(&envelope.to_string());
    }

    /// The next envelope, after checking it is one line of JSON that the wire
    /// schema accepts. Panics (failing the test) on a hang or a bad line.
    pub fn recv(&mut self) -> Value {
        let line = match self.lines.recv_timeout(REPLY_DEADLINE) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no reply within {REPLY_DEADLINE:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the provider closed stdout"),
        };
        let envelope: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("reply is not JSON ({e}): {line}"));
        let errors = crate::schema_errors(&envelope);
        assert!(
            errors.is_empty(),
            "reply violates the wire schema: {errors:#?}\n{line}"
        );
        envelope
    }

    /// Whether stdout has ended (the reader saw end of file) within `within`.
    pub fn stdout_closed_within(&mut self, within: Duration) -> bool {
        matches!(
            self.lines.recv_timeout(within),
            Err(RecvTimeoutError::Disconnected)
        )
    }

    /// Handshake and return the `handshake_ack`.
    pub fn handshake(&mut self) -> Value {
        self.send(&json!({"type": "handshake", "protocol_version": "contextgraph/1.0-draft"}));
        let ack = self.recv();
        assert_eq!(ack["type"], "handshake_ack", "{ack}");
        ack
    }

    /// Send a query with `id` and return the reply envelope.
    pub fn query(&mut self, id: &str, query: &Value) -> Value {
        self.send(&json!({"type": "query", "id": id, "query": query}));
        self.recv()
    }

    /// Send `verify` for `identities` and return the `verdicts` array.
    pub fn verify(&mut self, identities: &[Value]) -> Vec<Value> {
        self.send(&json!({"type": "verify", "request": {"frames": identities}}));
        let reply = self.recv();
        assert_eq!(reply["type"], "verified", "{reply}");
        reply["response"]["verdicts"]
            .as_array()
            .expect("verdicts array")
            .clone()
    }

    /// Close the provider's stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Wait for the process to exit within `within`; `None` if it did not.
    pub fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.is_running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The `frames` of a reply envelope, typed, after checking its type and id.
pub fn frames_of(reply: &Value, id: &str) -> ContextQueryResult {
    assert_eq!(reply["type"], "frames", "{reply}");
    assert_eq!(
        reply["id"], id,
        "reply carries its request's id (H4): {reply}"
    );
    serde_json::from_value(reply["result"].clone()).expect("result parses as ContextQueryResult")
}

/// The identity of a frame served by `provider_id`, as a verify request entry.
pub fn identity(provider_id: &str, frame_id: &str, digest: Option<&str>) -> Value {
    match digest {
        Some(d) => json!({"provider_id": provider_id, "frame_id": frame_id, "content_digest": d}),
        None => json!({"provider_id": provider_id, "frame_id": frame_id}),
    }
}
