//! Shared fixtures: the provider binary on real pipes, and the checks every
//! test leans on.
//!
//! - [`Provider`]: a child process whose stdout is framed by hand (not by the
//!   codec), so tests can see exactly what a misbehaving mode writes: blank
//!   lines, lines past any cap, a line that never ends.
//! - [`violations`] / [`disk_mismatches`]: the frame audit (`validate_with`,
//!   digests recomputed) and the F5 re-read of every file provenance.

#![allow(dead_code)] // each test binary uses a different subset

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use contextgraph_provider_sdk::{file_uri_to_path, read_range, sha256_digest, Sha256Hasher};
use contextgraph_types::validate::Anchor;
use contextgraph_types::{
    validate, Capabilities, ContextFrame, ContextQuery, ContextQueryResult, LineRange,
    ProviderInfo, Violation, PROTOCOL_VERSION,
};
use serde_json::{json, Value};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_contextgraph-misbehaving-provider");

/// The provider id `normal` announces.
pub const PROVIDER: &str = "misbehaving-provider";

/// How long a test waits for one reply before calling the provider hung. A
/// hang guard, not a speed assertion: generous for a noisy shared machine.
pub const REPLY_DEADLINE: Duration = Duration::from_secs(30);

/// How long a test waits for the process to exit after asking it to.
pub const EXIT_DEADLINE: Duration = Duration::from_secs(10);

/// Lines longer than this are reported by length only.
const KEEP_LINE_BYTES: usize = 8 * 1024 * 1024;

/// One line of the provider's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A line (without its `\n`), possibly empty.
    Line(Vec<u8>),
    /// A line longer than [`KEEP_LINE_BYTES`], by payload length.
    Long(u64),
}

/// The provider as a child process on pipes.
pub struct Provider {
    child: Child,
    stdin: Option<ChildStdin>,
    items: Receiver<Item>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Arc<AtomicBool>,
    /// Bytes received since the last newline.
    unterminated: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    /// Started without `--mode`: every reply must validate against the schema.
    strict: bool,
    /// The provider's own temporary folder (its `TMPDIR`), owned by the
    /// test: whatever the provider leaves behind shows up here.
    tmp: tempfile::TempDir,
}

impl Provider {
    /// Spawn the binary with `args`. Without `--mode` (i.e. `normal`),
    /// every reply read with [`recv`](Self::recv) is checked against the
    /// wire JSON Schema.
    pub fn spawn(args: &[&str]) -> Provider {
        let strict = !args.iter().any(|a| a.starts_with("--mode"));
        let tmp = tempfile::tempdir().expect("a temporary folder for the provider");
        let mut child = Command::new(BIN)
            .args(args)
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the provider");
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, items) = mpsc::channel();
        let unterminated = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        {
            let unterminated = Arc::clone(&unterminated);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut chunk = vec![0u8; 64 * 1024];
                let mut line = Vec::new();
                let mut len = 0u64;
                loop {
                    if stop.load(Ordering::Acquire) {
                        return; // drops stdout: the provider's next write fails
                    }
                    let n = match stdout.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    for &b in &chunk[..n] {
                        if b == b'\n' {
                            let item = if len as usize > KEEP_LINE_BYTES {
                                Item::Long(len)
                            } else {
                                Item::Line(std::mem::take(&mut line))
                            };
                            line.clear();
                            len = 0;
                            if tx.send(item).is_err() {
                                return;
                            }
                        } else {
                            len += 1;
                            if line.len() < KEEP_LINE_BYTES + 1 {
                                line.push(b);
                            }
                        }
                    }
                    unterminated.store(len, Ordering::Release);
                }
            });
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stderr_done = Arc::new(AtomicBool::new(false));
        {
            let stderr = Arc::clone(&stderr);
            let done = Arc::clone(&stderr_done);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr_pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut kept = stderr.lock().expect("stderr buffer");
                    if kept.len() < 1 << 20 {
                        kept.extend_from_slice(&buf[..n]);
                    }
                }
                done.store(true, Ordering::Release);
            });
        }
        let stdin = child.stdin.take();
        Provider {
            child,
            stdin,
            items,
            stderr,
            stderr_done,
            unterminated,
            stop,
            strict,
            tmp,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Send `signal` (`TERM`, `INT`, …) with the system's `kill`.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args(["-s", signal, &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -s {signal} failed");
    }

    /// SIGKILL, and reap the process.
    pub fn kill(&mut self) -> ExitStatus {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reap")
    }

    /// Everything in the provider's temporary folder (its `TMPDIR`): what
    /// it would leave behind if it stopped now.
    pub fn temp_entries(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.tmp.path())
            .expect("list the provider's TMPDIR")
            .map(|e| e.expect("an entry").path())
            .collect()
    }

    /// Spawn in `mode` with extra arguments (`normal` is spawned without
    /// `--mode`, so its replies are schema-checked).
    pub fn mode(mode: &str, extra: &[&str]) -> Provider {
        if mode == "normal" {
            return Provider::spawn(extra);
        }
        let mut args = vec!["--mode", mode];
        args.extend_from_slice(extra);
        Provider::spawn(&args)
    }

    /// Send raw bytes exactly as given.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).expect("write to the provider");
        stdin.flush().expect("flush to the provider");
    }

    /// Send one line (a newline is appended).
    pub fn send_line(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// Send one envelope.
    pub fn send(&mut self, envelope: &Value) {
        self.send_line(&envelope.to_string());
    }

    /// The next stdout line; `None` once stdout has closed. Panics on a hang.
    pub fn next_item(&mut self) -> Option<Item> {
        match self.items.recv_timeout(REPLY_DEADLINE) {
            Ok(item) => Some(item),
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => panic!(
                "no stdout line within {REPLY_DEADLINE:?}; stderr: {}",
                self.stderr_text()
            ),
        }
    }

    /// The next stdout line if one has already arrived (never waits).
    pub fn try_next_item(&mut self) -> Option<Item> {
        self.items.try_recv().ok()
    }

    /// The folder the provider said (on stderr, at start-up) it serves.
    pub fn serving_dir(&self) -> PathBuf {
        let deadline = Instant::now() + REPLY_DEADLINE;
        loop {
            let text = self.stderr_text();
            if let Some(line) = text.lines().find(|l| l.contains("; serving ")) {
                let (_, dir) = line.split_once("; serving ").unwrap_or_default();
                return PathBuf::from(dir.trim());
            }
            assert!(
                Instant::now() < deadline,
                "no start-up line on stderr: {text}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The next line as JSON; schema-checked for `normal` only (misbehaving
    /// modes break the schema on purpose).
    pub fn recv(&mut self) -> Value {
        if self.strict {
            return self.recv_valid();
        }
        self.recv_json()
    }

    fn recv_json(&mut self) -> Value {
        match self.next_item() {
            Some(Item::Line(line)) => serde_json::from_slice(&line).unwrap_or_else(|e| {
                panic!("line is not JSON ({e}): {}", String::from_utf8_lossy(&line))
            }),
            Some(Item::Long(n)) => panic!("expected an envelope, got a {n}-byte line"),
            None => panic!("the provider closed stdout; stderr: {}", self.stderr_text()),
        }
    }

    /// The next line, which must validate against the wire JSON Schema.
    pub fn recv_valid(&mut self) -> Value {
        let envelope = self.recv_json();
        let errors = contextgraph_testkit::schema_errors(&envelope);
        assert!(
            errors.is_empty(),
            "reply violates the wire schema: {errors:#?}\n{envelope}"
        );
        envelope
    }

    /// Handshake with this crate's protocol version; returns the ack.
    pub fn handshake(&mut self) -> Value {
        self.send(&json!({"type": "handshake", "protocol_version": PROTOCOL_VERSION}));
        let ack = self.recv();
        assert_eq!(ack["type"], "handshake_ack", "{ack}");
        ack
    }

    /// Send a query with `id` and return the reply.
    pub fn query(&mut self, id: &str, query: &Value) -> Value {
        self.send(&json!({"type": "query", "id": id, "query": query}));
        self.recv()
    }

    /// Send a verify for `identities` and return the reply.
    pub fn verify(&mut self, identities: &[Value]) -> Value {
        self.send(&json!({"type": "verify", "request": {"frames": identities}}));
        self.recv()
    }

    /// Close the provider's stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Stop reading stdout and close it, as a host giving up on a reply does.
    pub fn close_stdout(&mut self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Bytes of the line currently being received (0 right after a newline).
    pub fn unterminated_bytes(&self) -> u64 {
        self.unterminated.load(Ordering::Acquire)
    }

    /// Wait up to `within` for the process to exit.
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

    /// Send `shutdown` and wait for the exit.
    pub fn shutdown(&mut self) -> ExitStatus {
        self.send(&json!({"type": "shutdown"}));
        self.wait_exit(EXIT_DEADLINE)
            .unwrap_or_else(|| panic!("no exit within {EXIT_DEADLINE:?} of shutdown (R2)"))
    }

    /// Everything the provider wrote to stderr, once it has closed stderr
    /// (call after the process has exited).
    pub fn final_stderr(&self) -> String {
        let deadline = Instant::now() + EXIT_DEADLINE;
        while !self.stderr_done.load(Ordering::Acquire) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stderr_text()
    }

    /// Everything the provider wrote to stderr so far.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().expect("stderr buffer")).into_owned()
    }
}

impl Drop for Provider {
    /// End of input first, so a provider that still can exits by itself and
    /// deletes its scratch corpus; a kill only for the ones that will not.
    fn drop(&mut self) {
        self.close_stdin();
        if self.wait_exit(Duration::from_secs(2)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A query member with a goal and a budget.
pub fn query(goal: &str, max_frames: u32, max_tokens: u32) -> Value {
    json!({"goal": goal, "max_frames": max_frames, "max_tokens": max_tokens})
}

/// A query every frame of the built-in corpus fits.
pub fn roomy_query() -> Value {
    query("retry policy max_attempts backoff", 50, 100_000)
}

/// The typed form of a query member.
pub fn typed(query: &Value) -> ContextQuery {
    serde_json::from_value(query.clone()).expect("query parses")
}

/// The result of a `frames` reply, after checking its type and (H4) its id.
pub fn frames_of(reply: &Value, id: &str) -> ContextQueryResult {
    assert_eq!(reply["type"], "frames", "{reply}");
    assert_eq!(
        reply["id"], id,
        "reply carries its request's id (H4): {reply}"
    );
    result_of(reply)
}

/// The result of a `frames` reply, whatever its id.
pub fn result_of(reply: &Value) -> ContextQueryResult {
    assert_eq!(reply["type"], "frames", "{reply}");
    serde_json::from_value(reply["result"].clone()).expect("result parses")
}

/// Every rule `result` breaks as an answer to `query`, digests recomputed.
pub fn violations(result: &ContextQueryResult, query: &Value) -> Vec<Violation> {
    result.validate_with(&typed(query), &Sha256Hasher)
}

/// Panic unless `result` breaks no rule at all, F5 disk re-read included.
#[track_caller]
pub fn assert_honest(result: &ContextQueryResult, query: &Value) {
    let found = violations(result, query);
    assert!(found.is_empty(), "{found:#?}");
    let mismatches = disk_mismatches(result);
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

/// The file behind a frame's first file provenance entry.
pub fn file_of(frame: &ContextFrame) -> PathBuf {
    let uri = frame
        .file_provenance()
        .find_map(|p| p.uri.clone())
        .unwrap_or_else(|| panic!("{} has no file provenance", frame.id));
    file_uri_to_path(&uri).expect("a local file uri")
}

/// Panic unless `result` breaks `anchor` and nothing else.
#[track_caller]
pub fn assert_breaks_only(result: &ContextQueryResult, query: &Value, anchor: Anchor) {
    let found = violations(result, query);
    assert!(
        found.iter().any(|v| v.anchor == anchor),
        "expected a {anchor} violation, found {found:#?}"
    );
    assert!(
        found.iter().all(|v| v.anchor == anchor),
        "expected only {anchor} violations, found {found:#?}"
    );
    assert!(
        disk_mismatches(result).is_empty(),
        "{:#?}",
        disk_mismatches(result)
    );
}

/// The exact bytes `uri` + `range` address, re-read from disk now (F5).
pub fn bytes_addressed(uri: &str, range: &str) -> Option<Vec<u8>> {
    let path = file_uri_to_path(uri).ok()?;
    let file = std::fs::read(path).ok()?;
    let range = LineRange::parse(range)?;
    read_range(&file, range).map(<[u8]>::to_vec)
}

/// F5: every file provenance whose digest is not the SHA-256 of the bytes it
/// addresses on disk now, or whose frame content is not exactly those bytes.
pub fn disk_mismatches(result: &ContextQueryResult) -> Vec<String> {
    let mut out = Vec::new();
    for frame in &result.frames {
        for p in frame.file_provenance() {
            let uri = p.uri.as_deref().unwrap_or_default();
            let range = p.range.as_deref().unwrap_or_default();
            match bytes_addressed(uri, range) {
                None => out.push(format!("{}: cannot re-read {uri} {range}", frame.id)),
                Some(bytes) => {
                    if p.digest.as_deref() != Some(sha256_digest(&bytes).as_str()) {
                        out.push(format!("{}: digest of {uri} {range} differs", frame.id));
                    }
                    if frame.content.as_deref().map(str::as_bytes) != Some(bytes.as_slice()) {
                        out.push(format!("{}: content is not {uri} {range}", frame.id));
                    }
                }
            }
        }
    }
    out
}

/// Every rule an ack breaks, judged by a host speaking this crate's version.
pub fn ack_violations(ack: &Value) -> Vec<Violation> {
    let provider: ProviderInfo =
        serde_json::from_value(ack["provider"].clone()).expect("provider parses");
    let caps: Capabilities =
        serde_json::from_value(ack["capabilities"].clone()).expect("capabilities parse");
    let version = ack["protocol_version"].as_str().unwrap_or_default();
    validate::handshake_ack(version, &provider, &caps, PROTOCOL_VERSION)
}

/// A verify identity of this provider's frame.
pub fn identity(frame_id: &str, digest: Option<&str>) -> Value {
    match digest {
        Some(d) => json!({"provider_id": PROVIDER, "frame_id": frame_id, "content_digest": d}),
        None => json!({"provider_id": PROVIDER, "frame_id": frame_id}),
    }
}

/// The verdicts of a `verified` reply.
pub fn verdicts_of(reply: &Value) -> Vec<Value> {
    assert_eq!(reply["type"], "verified", "{reply}");
    reply["response"]["verdicts"]
        .as_array()
        .expect("verdicts array")
        .clone()
}

/// The files behind every file provenance of `result` (the built-in
/// corpus's files: unnamed `/proc/<pid>/fd/<n>` files on Linux).
pub fn corpus_files(result: &ContextQueryResult) -> Vec<PathBuf> {
    let files: std::collections::BTreeSet<PathBuf> = result
        .frames
        .iter()
        .flat_map(|f| f.file_provenance())
        .filter_map(|p| p.uri.as_deref())
        .map(|uri| file_uri_to_path(uri).expect("a local file uri"))
        .collect();
    assert!(!files.is_empty(), "no file-backed frame in {result:?}");
    files.into_iter().collect()
}

/// Poll until none of `paths` can be read any more; whether that happened
/// within `within`.
pub fn vanish(paths: &[PathBuf], within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while paths.iter().any(|p| std::fs::metadata(p).is_ok()) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// A handshaken provider in `mode` and its answer to [`roomy_query`].
pub fn roomy_answer(mode: &str) -> (Provider, ContextQueryResult) {
    let mut p = Provider::mode(mode, &[]);
    p.handshake();
    let reply = p.query("q1", &roomy_query());
    let result = frames_of(&reply, "q1");
    (p, result)
}
