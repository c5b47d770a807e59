//! `cgp context` asking for consent on a terminal, end to end through the
//! real binary on a real pseudo-terminal: stdin and stderr are the pty's
//! slave (as when a person runs it), stdout a pipe (as in `cgp context … >
//! prompt.txt`). The test answers on the pty's master once the question is
//! on screen, so no answer races the prompt.
//!
//! What is checked: a grant writes the same receipts `cgp consent grant`
//! writes and the provider is queried in this run; "n", an empty line or end
//! of input skip it (nothing sent, nothing written, the grant command
//! printed); `--no-input`, `CI`, or either of stdin and stderr not a
//! terminal mean no question at all (C1, C2, C6).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Hang guard only (a prompt nobody answers would block forever); never an
/// assertion about speed.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// The last words of every question.
const QUESTION_END: &str = "[g/s, default s]: ";

const EGRESS: &str = r#"{"reads":true,"writes":false,"egress":true}"#;
const SCOPED: &str =
    r#"{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-model"]}"#;

use crate::common::pty::open_pty;

/// The shared sandbox (contextgraph-testkit) with what the consent
/// question needs on top: a user name, a dumb terminal, no `CI` (which
/// means "never ask"), the consent store's path.
struct Sandbox(contextgraph_testkit::sandbox::Sandbox);

impl std::ops::Deref for Sandbox {
    type Target = contextgraph_testkit::sandbox::Sandbox;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Sandbox {
    fn new() -> Self {
        Sandbox(contextgraph_testkit::sandbox::Sandbox::new(crate::CGP))
    }

    fn store(&self) -> PathBuf {
        self.path("data/consent.ndjson")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.0.command(args);
        cmd.env("USER", "ada-at-the-terminal")
            .env("TERM", "dumb")
            // CI systems set CI, which means "never ask": the tests that
            // expect a question must not inherit it.
            .env_remove("CI");
        cmd
    }

    /// cgp.toml in the workspace with one stdio provider per `(name, script)`.
    fn configure(&self, providers: &[(&str, &Path)]) {
        let mut toml = String::new();
        for (name, script) in providers {
            toml.push_str(&format!(
                "[providers.{name}]\ncommand = {:?}\n",
                script.display().to_string()
            ));
        }
        self.write("ws/cgp.toml", &toml);
    }

    /// `cgp consent list --json`, run without a terminal.
    fn consent_records(&self) -> Vec<serde_json::Value> {
        let out = self
            .command(&["consent", "list", "--json"])
            .stdin(Stdio::null())
            .output()
            .expect("cgp runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["records"].as_array().unwrap().clone()
    }
}

/// `cgp` running with stdin and stderr on a pty.
struct Session {
    child: Child,
    master: File,
    screen: Receiver<Vec<u8>>,
    seen: String,
    /// How much of `seen` the awaited text has accounted for.
    awaited: usize,
}

impl Session {
    fn start(mut cmd: Command) -> Session {
        let pty = open_pty();
        cmd.stdin(Stdio::from(pty.slave.try_clone().unwrap()))
            .stderr(Stdio::from(pty.slave.try_clone().unwrap()))
            .stdout(Stdio::piped());
        let child = cmd.spawn().expect("cgp starts");
        // Only the child holds the slave now, so the master reads EIO (the
        // end) once it and everything it started have exited.
        drop(cmd);
        drop(pty.slave);
        let mut reader = pty.master.try_clone().unwrap();
        let (tx, screen) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            master: pty.master,
            screen,
            seen: String::new(),
            awaited: 0,
        }
    }

    /// Wait until the terminal shows `needle` after what was already awaited.
    fn expect(&mut self, needle: &str) {
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            if let Some(at) = self.seen[self.awaited..].find(needle) {
                self.awaited += at + needle.len();
                return;
            }
            match self
                .screen
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(bytes) => self.show(&bytes),
                Err(e) => {
                    let _ = self.child.kill();
                    panic!(
                        "{needle:?} never appeared on the terminal ({e:?}); it shows:\n{}",
                        self.seen
                    )
                }
            }
        }
    }

    fn show(&mut self, bytes: &[u8]) {
        self.seen
            .push_str(&String::from_utf8_lossy(bytes).replace('\r', ""));
    }

    /// Type `keys` on the terminal.
    fn type_keys(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Wait for the exit; return the exit code, stdout, and the whole terminal.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let mut stdout = String::new();
        let mut pipe = self.child.stdout.take().unwrap();
        let reading = std::thread::spawn(move || {
            let _ = pipe.read_to_string(&mut stdout);
            stdout
        });
        let deadline = Instant::now() + HANG_GUARD;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            while let Ok(bytes) = self.screen.try_recv() {
                self.show(&bytes);
            }
            // A question nobody will answer: fail now rather than at the guard.
            if self.seen[self.awaited..].contains(QUESTION_END) || Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "cgp did not exit (unexpected question?); the terminal shows:\n{}",
                    self.seen
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = reading.join().unwrap();
        // Everything written before the exit: the reader ends at EIO.
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            match self
                .screen
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(bytes) => self.show(&bytes),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("the terminal never closed:\n{}", self.seen)
                }
            }
        }
        (status.code(), stdout, self.seen)
    }
}

fn provider_status<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    json["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no provider {name} in {json}"))
}

#[test]
fn c6_answering_yes_records_a_receipt_as_cgp_consent_grant_does_and_queries_the_provider_now() {
    let s = Sandbox::new();
    let script = s.script_provider("egress-test", SCOPED);
    s.configure(&[("remote", &script)]);
    let mut cgp = Session::start(s.command(&["context", "retry backoff", "--json"]));
    cgp.expect(QUESTION_END);
    // The question says which provider and what it declared, before anything is sent.
    for shown in [
        "provider `remote`",
        "egress-test 1.0.0",
        "over stdio (",
        "sends it off this machine: yes",
        "scopes:      third-party-model",
        "no live consent receipt for third-party-model",
        "as `cgp consent grant remote --scope third-party-model` would",
        "(the default)",
    ] {
        assert!(
            cgp.seen.contains(shown),
            "{shown:?} missing from:\n{}",
            cgp.seen
        );
    }
    assert_eq!(
        s.queries_received("egress-test"),
        0,
        "C2: nothing before the answer"
    );
    // An unclear answer is asked again; it grants nothing.
    cgp.type_keys("maybe\n");
    cgp.expect("Please answer g (grant) or s (skip)");
    assert!(
        !s.store().exists(),
        "nothing recorded for an unclear answer"
    );
    cgp.type_keys("y\n");
    let (code, stdout, screen) = cgp.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains(
            "recorded receipt for egress-test 1.0.0 scope third-party-model by ada-at-the-terminal"
        ),
        "{screen}"
    );
    assert!(
        screen.contains("`cgp consent revoke remote` withdraws it"),
        "{screen}"
    );
    assert!(!screen.contains("warning: provider remote"), "{screen}");
    // Queried in this run, and accepted.
    let v: serde_json::Value =
        serde_json::from_str(&stdout).expect("JSON on stdout, untouched by the question");
    assert_eq!(provider_status(&v, "remote")["status"], "accepted", "{v}");
    assert_eq!(s.queries_received("egress-test"), 1);
    // The receipt is the one `cgp consent grant` writes: pinned, by the user.
    let records = s.consent_records();
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(r["state"], "in_force", "{r}");
    assert_eq!(r["record"]["record"], "scope_receipt", "{r}");
    assert_eq!(r["record"]["scope"], "third-party-model", "{r}");
    assert_eq!(r["record"]["provider_name"], "egress-test", "{r}");
    assert_eq!(r["record"]["provider_version"], "1.0.0", "{r}");
    assert_eq!(r["record"]["grantor"]["id"], "ada-at-the-terminal", "{r}");
    assert_eq!(r["record"]["grantor"]["kind"], "human", "{r}");
    assert!(
        r["record"].get("expires_at").is_none_or(|e| e.is_null()),
        "{r}"
    );

    // The next run, on a pipe, needs no question: the grant is durable.
    let out = s
        .command(&["context", "retry backoff", "--json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(provider_status(&v, "remote")["status"], "accepted", "{v}");
    assert_eq!(s.queries_received("egress-test"), 2);
}

#[test]
fn c2_answering_no_skips_the_provider_sends_nothing_writes_nothing_and_prints_the_grant_command() {
    let s = Sandbox::new();
    let script = s.script_provider("egress-test", SCOPED);
    s.configure(&[("remote", &script)]);
    let mut cgp = Session::start(s.command(&["context", "retry backoff"]));
    cgp.expect(QUESTION_END);
    cgp.type_keys("n\n");
    let (code, stdout, screen) = cgp.finish();
    // The workspace provider answered; the refusal is reported as without a terminal.
    assert_eq!(code, Some(0), "{screen}");
    assert!(stdout.contains("retry_with_backoff"), "{stdout}");
    assert!(
        screen.contains("run: cgp consent grant remote --scope third-party-model"),
        "{screen}"
    );
    assert!(!screen.contains("recorded"), "{screen}");
    assert_eq!(
        s.queries_received("egress-test"),
        0,
        "C2: nothing sent when skipped"
    );
    assert!(!s.store().exists(), "no consent store written for a skip");
}

#[test]
fn end_of_input_skips_and_an_empty_line_is_the_default_skip_each_provider_asked_in_turn() {
    let s = Sandbox::new();
    let first = s.script_provider("first-test", EGRESS);
    let second = s.script_provider("second-test", EGRESS);
    let third = s.script_provider("third-test", EGRESS);
    s.configure(&[("first", &first), ("second", &second), ("third", &third)]);
    let mut cgp = Session::start(s.command(&["context", "retry backoff", "--json"]));
    cgp.expect("Grant consent to `first`? [g/s, default s]: ");
    assert!(
        cgp.seen
            .contains("none declared (a plain egress grant covers it)"),
        "{}",
        cgp.seen
    );
    assert!(
        cgp.seen.contains("as `cgp consent grant first` would"),
        "{}",
        cgp.seen
    );
    cgp.type_keys("\n");
    cgp.expect("Grant consent to `second`? [g/s, default s]: ");
    cgp.type_keys("grant\n");
    cgp.expect("Grant consent to `third`? [g/s, default s]: ");
    // Ctrl-D: end of input.
    cgp.type_keys("\x04");
    let (code, stdout, screen) = cgp.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("no answer; `third` is skipped"), "{screen}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        provider_status(&v, "first")["status"],
        "consent_required",
        "{v}"
    );
    assert_eq!(provider_status(&v, "second")["status"], "accepted", "{v}");
    assert_eq!(
        provider_status(&v, "third")["status"],
        "consent_required",
        "{v}"
    );
    assert!(screen.contains("run: cgp consent grant first"), "{screen}");
    assert!(screen.contains("run: cgp consent grant third"), "{screen}");
    assert_eq!(s.queries_received("first-test"), 0);
    assert_eq!(s.queries_received("second-test"), 1);
    assert_eq!(s.queries_received("third-test"), 0);
    let records = s.consent_records();
    assert_eq!(records.len(), 1, "only the one granted: {records:?}");
    assert_eq!(records[0]["record"]["record"], "grant");
    assert_eq!(records[0]["record"]["provider_name"], "second-test");
}

/// Run with `cmd`'s stdin and stderr as given (a pty end or a pipe) and
/// assert no question was asked and the provider was refused as before.
fn assert_not_asked(s: &Sandbox, out: (Option<i32>, String, String)) {
    let (code, stdout, screen) = out;
    assert_eq!(code, Some(0), "{screen}");
    assert!(!screen.contains("Grant consent to"), "asked:\n{screen}");
    assert!(stdout.contains("retry_with_backoff"), "{stdout}");
    assert_eq!(s.queries_received("egress-test"), 0);
    assert!(!s.store().exists());
}

#[test]
fn no_input_or_ci_on_a_terminal_asks_nothing_and_refuses_as_before() {
    let s = Sandbox::new();
    let script = s.script_provider("egress-test", SCOPED);
    s.configure(&[("remote", &script)]);
    // Nothing is typed: were a question asked, the hang guard would fail the test.
    let cgp = Session::start(s.command(&["context", "retry backoff", "--no-input"]));
    let out = cgp.finish();
    assert!(
        out.2
            .contains("run: cgp consent grant remote --scope third-party-model"),
        "{}",
        out.2
    );
    assert_not_asked(&s, out);

    let mut cmd = s.command(&["context", "retry backoff"]);
    cmd.env("CI", "true");
    let out = Session::start(cmd).finish();
    assert!(
        out.2
            .contains("run: cgp consent grant remote --scope third-party-model"),
        "{}",
        out.2
    );
    assert_not_asked(&s, out);
}

#[test]
fn only_stdin_and_stderr_both_terminals_are_asked() {
    let s = Sandbox::new();
    let script = s.script_provider("egress-test", SCOPED);
    s.configure(&[("remote", &script)]);

    // stdin a terminal, stderr a pipe: the question would be invisible.
    let pty = open_pty();
    let out = s
        .command(&["context", "retry backoff"])
        .stdin(Stdio::from(pty.slave))
        .output()
        .unwrap();
    drop(pty.master);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_not_asked(
        &s,
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            err.clone(),
        ),
    );
    assert!(
        err.contains("run: cgp consent grant remote --scope third-party-model"),
        "{err}"
    );

    // stderr a terminal, stdin not one (a script feeding it): never read from it.
    let mut cmd = s.command(&["context", "retry backoff"]);
    cmd.stdin(Stdio::null());
    let pty = open_pty();
    cmd.stderr(Stdio::from(pty.slave.try_clone().unwrap()))
        .stdout(Stdio::piped());
    let child = cmd.spawn().unwrap();
    drop(cmd);
    drop(pty.slave);
    let mut master = pty.master;
    let reading = std::thread::spawn(move || {
        let mut screen = Vec::new();
        let _ = master.read_to_end(&mut screen); // ends at EIO
        String::from_utf8_lossy(&screen).replace('\r', "")
    });
    let out = child.wait_with_output().unwrap();
    let screen = reading.join().unwrap();
    assert!(
        screen.contains("run: cgp consent grant remote --scope third-party-model"),
        "{screen}"
    );
    assert_not_asked(
        &s,
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            screen,
        ),
    );
}
