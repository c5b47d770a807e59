//! Shared fixtures for the docs provider's tests, and for the `cgp` CLI's
//! tests (which include this file by path, so both binaries are driven by
//! the same harness).
//!
//! - [`docs_fixture`]: a temporary folder of documents, including decoys that
//!   must never be served (hidden, `target/`, `node_modules/`).
//! - [`Session`]: a provider process on real pipes. Every line it sends is
//!   checked against the wire JSON Schema (through the testkit) before the test sees it.
//! - [`assert_honest_answer`]: every frame passes `validate_with` with zero
//!   violations, and every file provenance digest equals a fresh SHA-256 of
//!   the bytes its `uri` + `range` address, re-read from disk.

#![allow(dead_code)] // each test binary uses a different subset

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use contextgraph_provider::{file_uri_to_path, read_range, sha256_digest, Sha256Hasher};
use contextgraph_types::{ContextQuery, ContextQueryResult, LineRange};
use serde_json::{json, Value};
use tempfile::TempDir;

/// How long a test waits for one reply before declaring the provider hung.
/// A hang guard, not a speed assertion: generous on a noisy shared machine.
pub const REPLY_DEADLINE: Duration = Duration::from_secs(30);

/// R2 asks for an exit "within a couple of seconds" of `shutdown`; allow a
/// loaded machine some slack on top.
pub const EXIT_DEADLINE: Duration = Duration::from_secs(5);

/// The schema violations of one envelope, as sentences: against our own wire
/// schema, and the shared one too when `../shared/wire` is present (testkit).
pub fn schema_errors(envelope: &Value) -> Vec<String> {
    contextgraph_testkit::schema_errors(envelope)
}

/// The retry document: a heading section, a subsection with a fenced block
/// whose `#` line is not a heading, and a link to an existing file.
pub const RETRY_MD: &str = "# Retry policy\n\nRetry behaviour is set in `src/config.rs`. max_attempts bounds the tries;\nbackoff_ms is the initial delay.\n\n## Backoff\n\nThe delay doubles after each retry attempt.\n\n```sh\n# not a heading\nexport RETRIES=3\n```\n";

/// A folder of documents:
/// - `README.md` (text before the first heading, two headings, a link);
/// - `docs/retry.md` ([`RETRY_MD`]);
/// - `docs/timeouts.md` (setext headings);
/// - `docs/logging.txt` (CRLF line endings);
/// - `src/config.rs` (not a document; the target of a `doc.documents` edge);
/// - decoys mentioning "retry" that must never be served: `.hidden/secret.md`,
///   `target/generated.md`, `node_modules/pkg/README.md`, `docs/.draft.md`,
///   `docs/retry.html`.
pub fn docs_fixture() -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let files: [(&str, &str); 10] = [
        (
            "README.md",
            "Project intro: a demo workspace.\n\n# Getting started\n\nInstall it, then read [the retry policy](docs/retry.md).\n\n## Configuration\n\nAll settings live in one file.\n",
        ),
        ("docs/retry.md", RETRY_MD),
        (
            "docs/timeouts.md",
            "Timeouts\n========\n\nRequests time out after 30 seconds.\n\nConnection limits\n-----------------\n\nAt most 8 connections per host.\n",
        ),
        (
            "docs/logging.txt",
            "Logging\r\n=======\r\n\r\nLogs go to stderr; set LOG_LEVEL to change verbosity.\r\n",
        ),
        ("src/config.rs", "pub struct RetryPolicy { pub max_attempts: u32 }\n"),
        (".hidden/secret.md", "# Retry secret\n\nretry retry retry\n"),
        ("target/generated.md", "# Retry generated\n\nretry retry\n"),
        ("node_modules/pkg/README.md", "# Retry vendored\n\nretry\n"),
        ("docs/.draft.md", "# Retry draft\n\nretry\n"),
        ("docs/retry.html", "<h1>Retry</h1> retry\n"),
    ];
    for (rel, text) in files {
        write_file(dir.path(), rel, text);
    }
    dir
}

/// Write `text` to `root/rel`, creating directories.
pub fn write_file(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create dirs");
    }
    std::fs::write(&path, text).expect("write fixture file");
}

/// A query envelope's `query` member.
pub fn query(goal: &str, max_frames: u32, max_tokens: u32) -> Value {
    json!({"goal": goal, "max_frames": max_frames, "max_tokens": max_tokens})
}

/// The docs provider binary, for this crate's tests (`None` elsewhere, e.g.
/// in the CLI crate, which drives `cgp serve docs` instead).
pub const DOCS_BIN: Option<&str> = option_env!("CARGO_BIN_EXE_contextgraph-provider-docs");

/// A fresh [`docs_fixture`] served by `program args… <fixture dir>`, after a
/// completed handshake.
pub fn start(program: Option<&str>, args: &[&str]) -> (TempDir, Session) {
    let program = program.expect("the provider binary is built for this test");
    let dir = docs_fixture();
    let mut all: Vec<OsString> = args.iter().map(OsString::from).collect();
    all.push(dir.path().into());
    let mut session = Session::spawn(program, all);
    session.handshake();
    (dir, session)
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
        let errors = schema_errors(&envelope);
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

/// The exact bytes `uri` + `range` address, re-read from disk now (F5).
pub fn bytes_addressed(uri: &str, range: &str) -> Vec<u8> {
    let path = file_uri_to_path(uri).unwrap_or_else(|e| panic!("{uri}: {e}"));
    let file = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let range = LineRange::parse(range).unwrap_or_else(|| panic!("range {range:?}"));
    read_range(&file, range)
        .unwrap_or_else(|| panic!("{range} is past the end of {}", path.display()))
        .to_vec()
}

/// Every frame of `result` passes `validate_with(&query, hasher)` with zero
/// violations; every file provenance digest is a fresh SHA-256 of the bytes
/// its uri + range address on disk; and the content is exactly those bytes.
pub fn assert_honest_answer(result: &ContextQueryResult, query: &Value) {
    let query: ContextQuery = serde_json::from_value(query.clone()).expect("query parses");
    let violations = result.validate_with(&query, &Sha256Hasher);
    assert!(violations.is_empty(), "violations: {violations:#?}");
    for frame in &result.frames {
        let file_provenance: Vec<_> = frame.file_provenance().collect();
        assert!(
            !file_provenance.is_empty(),
            "{} has no file provenance",
            frame.id
        );
        for p in file_provenance {
            let uri = p.uri.as_deref().expect("F5: file provenance has a uri");
            let range = p.range.as_deref().expect("sections carry a range");
            let bytes = bytes_addressed(uri, range);
            assert_eq!(
                p.digest.as_deref(),
                Some(sha256_digest(&bytes).as_str()),
                "F5: provenance digest of {} is not the sha256 of {uri} {range}",
                frame.id
            );
            assert_eq!(
                frame.content.as_deref().map(str::as_bytes),
                Some(bytes.as_slice()),
                "content of {} is not exactly the bytes of {uri} {range}",
                frame.id
            );
        }
    }
}

/// The identity of a frame served by `provider_id`, as a verify request entry.
pub fn identity(provider_id: &str, frame_id: &str, digest: Option<&str>) -> Value {
    match digest {
        Some(d) => json!({"provider_id": provider_id, "frame_id": frame_id, "content_digest": d}),
        None => json!({"provider_id": provider_id, "frame_id": frame_id}),
    }
}
