//! The trust boundary, round two (issue 26), end to end on the real `cgp`.
//! Each test names the finding it covers; the library-level tests of the
//! same findings live beside the code (config, docs, search, compose).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use contextgraph_testkit::sandbox::Sandbox;

const CGP: &str = env!("CARGO_BIN_EXE_cgp");

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ws_arg(s: &Sandbox) -> String {
    s.ws().to_str().unwrap().to_owned()
}

/// The token of a composed prompt.
fn token_of(prompt: &str) -> String {
    let body = &prompt[contextgraph_compose::PREAMBLE.len()..];
    body["<frame-".len()..body.find([' ', '>']).expect("a fence line")].to_owned()
}

/// N1: a non-ASCII anchor (byte 5 inside a character) is an anchor that
/// names a file or nothing, never a panic: on `cgp context`, and over
/// `cgp serve workspace`.
#[test]
fn n1_non_ascii_anchors_never_panic() {
    let s = Sandbox::new(CGP);
    s.write("ws/文档/说明.md", "# 说明\n\nretry with backoff\n");
    let ws = ws_arg(&s);
    for anchor in ["ééé", "文档/说明.md", "fileé:x", "ééé#ééé"] {
        let out = s.run(&["context", "retry", "--anchor", anchor, "--dir", &ws]);
        assert!(out.status.success(), "{anchor}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
    let mut child = s
        .command(&["serve", "workspace", "--quiet", "--no-cache", &ws])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}}"#
    )
    .unwrap();
    writeln!(stdin, "{}", serde_json::json!({"type": "query", "id": "q1", "query": {"goal": "retry", "anchors": ["ééé", "文档/说明.md"], "max_frames": 3, "max_tokens": 400}})).unwrap();
    writeln!(stdin, r#"{{"type":"shutdown"}}"#).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let replies: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(
        replies.get(1).map(|r| r["type"].clone()),
        Some("frames".into()),
        "{replies:?}"
    );
}

/// N4: the fence token is not the same in every prompt: two runs on the
/// same workspace differ, and `CGP_FENCE_SEED=0` makes output reproducible.
#[test]
fn n4_the_fence_token_differs_between_runs_unless_the_seed_is_fixed() {
    let s = Sandbox::new(CGP);
    let ws = ws_arg(&s);
    let run = |seed: Option<&str>| {
        let mut cmd = s.command(&["context", "retry backoff", "--dir", &ws]);
        cmd.env_remove("CGP_FENCE_SEED");
        if let Some(seed) = seed {
            cmd.env("CGP_FENCE_SEED", seed);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let tokens: std::collections::HashSet<String> = (0..4).map(|_| token_of(&run(None))).collect();
    assert!(tokens.len() > 1, "the same token in four runs: {tokens:?}");
    let fixed = run(Some("0"));
    assert_eq!(fixed, run(Some("0")), "a fixed seed reproduces the bytes");
    assert_eq!(token_of(&fixed), "7c15");
}

fn session_turn(s: &Sandbox, session: &Path, goal: &str) -> (serde_json::Value, String) {
    let out = s.run(&[
        "context",
        goal,
        "--session",
        session.to_str().unwrap(),
        "--json",
        "--dir",
        &ws_arg(s),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    (serde_json::from_slice(&out.stdout).unwrap(), stderr(&out))
}

/// N8: a session file is bound to its workspace and this machine: one
/// edited by hand (claiming a delivery), or moved to another workspace, is
/// refused with a warning and a fresh session starts.
#[test]
fn n8_a_forged_or_moved_session_file_is_refused() {
    let s = Sandbox::new(CGP);
    let session = s.path("turns.json");
    let (t1, _) = session_turn(&s, &session, "retry backoff");
    assert_eq!(t1["session"]["turn"], 1);
    let (t2, _) = session_turn(&s, &session, "retry backoff");
    assert_eq!(t2["session"]["turn"], 2, "cgp's own file is honoured");
    // Edit it: the session inside claims a later turn.
    let text = std::fs::read_to_string(&session).unwrap();
    let forged = text.replace("\\\"turn\\\":2", "\\\"turn\\\":9");
    assert_ne!(forged, text, "the edit applied");
    std::fs::write(&session, forged).unwrap();
    let (t, err) = session_turn(&s, &session, "retry backoff");
    assert_eq!(t["session"]["turn"], 1, "a fresh session");
    assert!(err.contains("authentication code does not match"), "{err}");
    // A valid file of another workspace is refused here.
    let other = Sandbox::new(CGP);
    let moved = other.path("turns.json");
    std::fs::copy(&session, &moved).unwrap();
    // Same data dir, so only the workspace differs.
    let out = other
        .command(&[
            "context",
            "retry backoff",
            "--session",
            moved.to_str().unwrap(),
            "--json",
            "--dir",
            &ws_arg(&other),
        ])
        .env("CGP_DATA_DIR", s.path("data"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("authentication code does not match"),
        "{}",
        stderr(&out)
    );
    // A hand-written session (the old, unauthenticated form) is refused too.
    std::fs::write(
        &session,
        r#"{"format":"cgp-session/1","token":"7c15","preamble":true,"turn":5,"held":[],"totals":{"turns":5,"tokens_sent":0,"tokens_saved":0,"frames_sent":0,"frames_reused":0,"frames_revalidated":0,"frames_withdrawn":0}}"#,
    )
    .unwrap();
    let (t, err) = session_turn(&s, &session, "retry backoff");
    assert_eq!(t["session"]["turn"], 1, "{t}");
    assert!(
        err.contains("cgp reads only session files it wrote"),
        "{err}"
    );
}

/// N9: the README's session file in the workspace is never indexed or
/// served back as evidence, under that name or any other.
#[test]
fn n9_session_files_in_the_workspace_are_never_evidence() {
    let s = Sandbox::new(CGP);
    let named = s.ws().join(".cgp-session.json");
    let other = s.ws().join("notes/turns.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    for session in [&named, &other] {
        session_turn(&s, session, "retry backoff exponential");
        session_turn(&s, session, "retry backoff exponential");
    }
    let out = s.run(&[
        "context",
        "cgp-session-file workspace mac held turn retry",
        "--json",
        "--dir",
        &ws_arg(&s),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let prompt = v["prompt"].as_str().unwrap_or("");
    assert!(
        !prompt.contains("cgp-session"),
        "a session file was served:\n{prompt}"
    );
    assert!(!prompt.contains(".cgp-session.json"), "{prompt}");
}

/// N11: control sequences from repository files are escaped when the
/// prompt goes to a terminal, and only then: piped output is byte-exact.
#[cfg(unix)]
#[test]
fn n11_escape_sequences_reach_a_terminal_escaped_and_a_pipe_verbatim() {
    let s = Sandbox::new(CGP);
    s.write(
        "ws/src/evil.rs",
        "/// Retries with backoff.\npub fn retry_backoff_evil() {\n    // \u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;ZXZpbA==\u{7}\n}\n",
    );
    let ws = ws_arg(&s);
    let piped = s.run(&["context", "retry_backoff_evil", "--dir", &ws]);
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert!(
        stdout(&piped).contains("\u{1b}]52;c;ZXZpbA=="),
        "piped output is byte-exact"
    );
    let pty = crate::common::pty::open_pty();
    let mut child = s
        .command(&["context", "retry_backoff_evil", "--dir", &ws])
        .stdout(Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    drop(pty.slave);
    let mut master = pty.master;
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        seen
    });
    let status = child.wait().unwrap();
    assert!(status.success());
    let seen = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert!(seen.contains("retry_backoff_evil"), "{seen}");
    assert!(
        !seen.contains('\u{1b}'),
        "a raw ESC reached the terminal: {seen:?}"
    );
    assert!(seen.contains("\\u{1b}]52;c;"), "{seen}");
}

/// N17: `cgp trust` on a workspace whose cgp.toml another user owns says
/// so, not "no cgp.toml found".
#[test]
fn n17_trust_names_a_cgp_toml_another_user_owns() {
    let s = Sandbox::new(CGP);
    let file = s.write_untrusted("ws/cgp.toml", "budget = 1000\n");
    let chowned = Command::new("chown")
        .args(["65534:65534"])
        .arg(&file)
        .status()
        .is_ok_and(|st| st.success());
    if !chowned {
        eprintln!("skipped: chown needs root (the test runs as another user)");
        return;
    }
    let out = s.run(&["trust", "--dir", &ws_arg(&s)]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("no cgp.toml found"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("another user (uid 65534)"),
        "{}",
        stderr(&out)
    );
}

/// Bounded work per request: `cgp serve workspace` answers a query over a
/// limit with `bad_request` and a sentence naming it.
#[test]
fn bounded_work_serve_workspace_refuses_an_oversized_goal() {
    let s = Sandbox::new(CGP);
    let mut child = s
        .command(&["serve", "workspace", "--quiet", "--no-cache", &ws_arg(&s)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}}"#
    )
    .unwrap();
    let goal: String = (0..100_000).map(|i| format!("w{i} ")).collect();
    writeln!(stdin, "{}", serde_json::json!({"type": "query", "id": "big", "query": {"goal": goal, "max_frames": 3, "max_tokens": 400}})).unwrap();
    writeln!(stdin, r#"{{"type":"shutdown"}}"#).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let replies: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let reply = replies
        .iter()
        .find(|r| r["id"] == "big")
        .expect("an answer");
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "bad_request", "{reply}");
    assert!(
        reply["message"]
            .as_str()
            .unwrap()
            .contains("over the limit of 32768"),
        "{reply}"
    );
}

/// Residual: `cgp bridge mcp` honours a `shutdown` that follows a
/// handshake while the MCP server is still initialising, and says on
/// stderr why the handshake is slow when the server takes its time.
#[test]
fn residual_the_bridge_stops_on_shutdown_during_initialize_and_says_why_it_is_slow() {
    let s = Sandbox::new(CGP);
    let silent = s.script(
        "bin/silent-mcp.sh",
        "#!/bin/sh\nexec sleep 30 2>/dev/null\n",
    );
    let start = std::time::Instant::now();
    let mut child = s
        .command(&["bridge", "mcp", "--", silent.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    writeln!(stdin, r#"{{"type":"shutdown"}}"#).unwrap();
    stdin.flush().unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "shutdown after a handshake was not honoured during initialize"
    );

    let out = s
        .command(&[
            "bridge",
            "mcp",
            "--timeout-ms",
            "3500",
            "--",
            silent.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("waiting for the MCP server") && stderr(&out).contains("initialize"),
        "{}",
        stderr(&out)
    );
}

/// N14: with an unreadable line in the consent store that may concern the
/// provider, `cgp consent grant` refuses (a receipt could not take effect)
/// and says which line to fix, instead of printing a receipt whose advice
/// loops; nothing is appended.
#[test]
fn n14_a_grant_that_could_not_take_effect_is_refused() {
    let s = Sandbox::new(CGP);
    let (_, log) = crate::trust_boundary::user_egress_provider(&s);
    let store = s.path("data/consent.ndjson");
    std::fs::create_dir_all(store.parent().unwrap()).unwrap();
    std::fs::write(&store, "{\"revocation\": \n").unwrap();
    let out = s.run(&["consent", "grant", "remote"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("line 1"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was recorded"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&store).unwrap(),
        "{\"revocation\": \n"
    );
    let out = s.run(&["context", "retry backoff", "--no-input"]);
    assert_eq!(crate::trust_boundary::queries(&log), 0, "{}", stderr(&out));
}

/// N18: with `CGP_DATA_DIR` a regular file, `consent list` fails as
/// `consent grant` does, instead of exiting 0 with "no records".
#[test]
fn n18_consent_list_fails_when_the_data_dir_is_a_file() {
    let s = Sandbox::new(CGP);
    let file = s.write_untrusted("not-a-dir", "x");
    let out = s
        .command(&["consent", "list"])
        .env("CGP_DATA_DIR", &file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("set CGP_DATA_DIR to a directory"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("no records"), "{}", stdout(&out));
}

/// N15: `cgp config` shows a workspace cgp.toml's bidi control as a TOML
/// escape, never raw.
#[test]
fn n15_cgp_config_never_prints_a_raw_bidi_control() {
    let s = Sandbox::new(CGP);
    s.write_untrusted(
        "ws/cgp.toml",
        "[providers.notes]\ntype = \"docs\"\ndir = \"docs\u{202E}txt.md\"\n",
    );
    std::fs::create_dir_all(s.ws().join("docs\u{202E}txt.md")).unwrap();
    let out = s.run(&["config", "--dir", &ws_arg(&s)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains('\u{202E}'), "{}", stdout(&out));
    assert!(stdout(&out).contains("\\u202E"), "{}", stdout(&out));
}

/// Wait until process `pid` has installed its SIGBUS handler (Linux shows
/// caught signals as a bit mask in `/proc/PID/status`), so the signal below
/// tests the handler rather than racing the process's start on a busy
/// machine. Elsewhere, a fixed pause.
#[cfg(unix)]
fn wait_for_bus_handler(pid: u32) {
    let status = format!("/proc/{pid}/status");
    if !std::path::Path::new(&status).exists() {
        std::thread::sleep(std::time::Duration::from_millis(500));
        return;
    }
    let sigbus_bit = 1u64 << (libc::SIGBUS - 1);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let caught = std::fs::read_to_string(&status)
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("SigCgt:"))
                    .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            })
            .unwrap_or(0);
        if caught & sigbus_bit != 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("cgp (pid {pid}) never installed a SIGBUS handler");
}

/// N10: a SIGBUS (a mapped index truncated under cgp) is reported in a
/// sentence on stderr, not a silent death.
#[cfg(unix)]
#[test]
fn n10_a_bus_error_is_reported_before_cgp_exits() {
    let s = Sandbox::new(CGP);
    let child = s
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_bus_handler(child.id());
    let sent = Command::new("kill")
        .args(["-BUS", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(70), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("truncated in place by another process"),
        "{}",
        stderr(&out)
    );
}
