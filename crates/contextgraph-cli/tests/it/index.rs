//! Index artifacts end to end (issue 28): `cgp index build` / `verify`, and
//! `cgp serve workspace DIR --index ARTIFACT --read-only` as a replica:
//! it serves the frames a local `cgp serve workspace` serves, refuses a
//! damaged artifact or a checkout at another commit, writes nothing, and
//! reports (does not re-index) files that differ from the artifact.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::checkout::{tree_snapshot, Checkout, COMMIT, OTHER_COMMIT};
use crate::common::http;
use crate::common::serve_http::{sigterm, spawn_announced};

const HANDSHAKE: &str = "{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}";

/// The goals every comparison asks (the nginx test asks them too).
pub(crate) const GOALS: [&str; 3] = [
    "retry a request with exponential backoff",
    "parse the port number from configuration",
    "host name configuration",
];

pub(crate) fn query(id: usize, goal: &str) -> String {
    format!(
        "{{\"type\":\"query\",\"id\":\"q{id}\",\"query\":{{\"goal\":{goal:?},\"max_frames\":4,\"max_tokens\":800}}}}"
    )
}

/// A whole stdio session (handshake, one query per goal, shutdown) with
/// `command`; its stdout, which must be a clean exit's.
fn stdio_session(mut command: Command) -> Vec<u8> {
    let mut input = format!("{HANDSHAKE}\n");
    for (i, goal) in GOALS.iter().enumerate() {
        input.push_str(&query(i, goal));
        input.push('\n');
    }
    input.push_str("{\"type\":\"shutdown\"}\n");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The lines of a session's output, sorted (answers carry their query's id).
fn sorted_lines(out: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(out)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

fn local_serve(co: &Checkout) -> Command {
    let mut c = co.cgp();
    c.args(["serve", "workspace", "--quiet", "--refresh-secs", "0"])
        .arg(co.dir());
    c
}

fn replica(co: &Checkout) -> Command {
    let mut c = co.cgp();
    c.args(["serve", "workspace", "--quiet"])
        .arg(co.dir())
        .arg("--index")
        .arg(co.artifact())
        .arg("--read-only");
    c
}

/// `replica` over HTTP on a free loopback port; the child, its address
/// and the rest of its stderr.
fn http_replica(
    co: &Checkout,
) -> (
    std::process::Child,
    std::net::SocketAddr,
    std::sync::mpsc::Receiver<String>,
) {
    let mut c = replica(co);
    c.args(["--http", "127.0.0.1:0"]);
    let (child, url, rest) = spawn_announced(c);
    (child, http::authority(&url), rest)
}

/// The artifact id `cgp index build` printed.
fn built_id(stdout: &str) -> String {
    stdout
        .split("artifact ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .unwrap_or_else(|| panic!("no artifact id in {stdout:?}"))
        .to_owned()
}

#[test]
fn index_artifact_round_trip_builds_verifies_and_serves_the_local_frames() {
    let co = Checkout::new();
    let built = co.build();
    assert!(built.contains(COMMIT), "{built}");
    assert!(
        built.contains("with vectors"),
        "the default build carries vectors: {built}"
    );
    let id = built_id(&built);

    let verify = co.verify(true);
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    assert!(
        said.contains("ok") && said.contains(&id) && said.contains(COMMIT),
        "{said}"
    );

    // Stdio: the replica's whole session is the local server's, byte for byte.
    let local = stdio_session(local_serve(&co));
    let served = stdio_session(replica(&co));
    let frames = local
        .split(|b| *b == b'\n')
        .filter(|l| l.starts_with(b"{\"type\":\"frames\""))
        .count();
    assert_eq!(frames, GOALS.len(), "{}", String::from_utf8_lossy(&local));
    assert!(
        String::from_utf8_lossy(&local).contains("retry_with_backoff"),
        "the fixture query finds its function: {}",
        String::from_utf8_lossy(&local)
    );
    // Queries are answered concurrently, so answers may come in another
    // order (each names its query's id): the same lines, byte for byte.
    assert_eq!(
        sorted_lines(&served),
        sorted_lines(&local),
        "a replica serves the local frames"
    );

    // HTTP: each answer is the local frames line of the same query id
    // (the stdio answers may come in any order), with no handshake sent to
    // this replica (a load balancer spreads a host's requests).
    let (child, addr, _rest) = http_replica(&co);
    let local_text = String::from_utf8_lossy(&local);
    for (i, goal) in GOALS.iter().enumerate() {
        let reply = http::post(addr, "/cgp", query(i, goal).as_bytes()).unwrap();
        assert_eq!(reply.status, 200, "{}", reply.text());
        let id = format!("\"id\":\"q{i}\"");
        let line = local_text
            .lines()
            .find(|l| l.starts_with("{\"type\":\"frames\"") && l.contains(&id))
            .unwrap_or_else(|| panic!("no local answer to q{i}: {local_text}"));
        assert_eq!(reply.text(), line, "goal {goal:?}");
    }
    sigterm(&child);
}

#[test]
fn index_artifact_with_a_flipped_byte_is_refused_by_verify_and_serve() {
    let co = Checkout::new();
    co.build();
    let good = std::fs::read(co.artifact()).unwrap();
    // The header, the manifest, the index member, the last byte (vectors).
    for at in [3, 40, good.len() / 2, good.len() - 1] {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        std::fs::write(co.artifact(), &bad).unwrap();
        let verify = co.verify(false);
        let err = String::from_utf8_lossy(&verify.stderr);
        assert_eq!(verify.status.code(), Some(1), "byte {at}: {err}");
        assert!(
            err.contains("co.cgpidx")
                && (err.contains("damaged") || err.contains("not a cgp index artifact")),
            "byte {at}: {err}"
        );
        let mut serve = replica(&co);
        let out = serve
            .args(["--http", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "byte {at}: {err}");
        assert!(!err.contains("listening on"), "never served: {err}");
        assert!(err.contains("co.cgpidx"), "byte {at}: {err}");
    }
}

#[test]
fn index_artifact_for_another_commit_is_refused() {
    let co = Checkout::new();
    co.build();
    co.set_commit(OTHER_COMMIT);
    let verify = co.verify(true);
    let err = String::from_utf8_lossy(&verify.stderr);
    assert_eq!(verify.status.code(), Some(1), "{err}");
    assert!(
        err.contains(COMMIT) && err.contains(OTHER_COMMIT),
        "names both: {err}"
    );
    // Without a checkout, the file itself is sound.
    let alone = co.verify(false);
    assert!(
        alone.status.success(),
        "{}",
        String::from_utf8_lossy(&alone.stderr)
    );

    let out = replica(&co)
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("listening on"), "never served: {err}");
    assert!(err.contains(COMMIT) && err.contains(OTHER_COMMIT), "{err}");

    // A plain directory (no .git) is "no commit": another state, refused too.
    std::fs::remove_dir_all(co.dir().join(".git")).unwrap();
    let out = replica(&co).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no commit"), "{err}");
}

#[test]
fn index_read_only_serving_writes_nothing() {
    let co = Checkout::new();
    co.build();
    // Everything a replica could touch: the checkout, the artifact beside
    // it, and the home and cache directories.
    let before = tree_snapshot(co.tmp.path());

    let (child, addr, rest) = http_replica(&co);
    let health = http::get(addr, "/healthz").unwrap();
    assert_eq!(health.status, 200, "{}", health.text());
    for (i, goal) in GOALS.iter().enumerate() {
        let reply = http::post(addr, "/cgp", query(i, goal).as_bytes()).unwrap();
        assert!(
            reply.text().starts_with("{\"type\":\"frames\""),
            "{}",
            reply.text()
        );
    }
    // The drift check (which reads every file) has run.
    wait_for_drift(addr);
    sigterm(&child);
    let mut child = child;
    assert!(child.wait().unwrap().success());
    let _ = rest.recv_timeout(Duration::from_secs(60));
    stdio_session(replica(&co));

    let after = tree_snapshot(co.tmp.path());
    let changed: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| format!("{k}: {:?} -> {:?}", before.get(k), after.get(k)))
        .collect();
    assert!(
        changed.is_empty(),
        "a read-only replica wrote: {changed:#?}"
    );
    assert!(!before.is_empty());
}

/// Poll `/healthz` until the drift check has reported; its JSON.
fn wait_for_drift(addr: std::net::SocketAddr) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let reply = http::get(addr, "/healthz").unwrap();
        let json: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
        if !json["drifted"].is_null() {
            return json;
        }
        assert!(
            Instant::now() < deadline,
            "the drift check never reported: {json}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn index_read_only_reports_drifted_files_and_does_not_reindex_them() {
    let co = Checkout::new();
    let id = built_id(&co.build());
    // After the build: one file edited, one added.
    std::fs::write(
        co.dir().join("src/parse.rs"),
        "/// Parses a port number, now in hexadecimal.\npub fn parse_port_hex(text: &str) -> Option<u16> {\n    u16::from_str_radix(text.trim(), 16).ok()\n}\n",
    )
    .unwrap();
    std::fs::write(
        co.dir().join("src/quorum.rs"),
        "/// Counts the votes of a quorum of replicas.\npub fn quorum_votes(n: u32) -> u32 {\n    n / 2 + 1\n}\n",
    )
    .unwrap();
    let (child, addr, rest) = http_replica(&co);
    let health = wait_for_drift(addr);
    assert_eq!(health["drifted"], 2, "{health}");
    assert_eq!(health["ready"], true, "{health}");
    assert_eq!(health["read_only"], true, "{health}");
    assert_eq!(health["commit"], COMMIT, "{health}");
    assert_eq!(health["artifact"], id.as_str(), "{health}");

    // Not re-indexed: the added file is unknown, the edited one's stale
    // chunks are not served, and its new text is not either.
    for goal in ["quorum votes of replicas", "parse port hexadecimal"] {
        let reply = http::post(addr, "/cgp", query(0, goal).as_bytes()).unwrap();
        let text = reply.text();
        assert!(text.starts_with("{\"type\":\"frames\""), "{text}");
        assert!(
            !text.contains("quorum_votes")
                && !text.contains("parse_port_hex")
                && !text.contains("fn parse_port("),
            "{goal}: {text}"
        );
    }
    // A probe is GET only, and needs no handshake.
    let post = http::post(addr, "/healthz", b"{}").unwrap();
    assert_eq!(post.status, 405);
    sigterm(&child);
    let log = rest.recv_timeout(Duration::from_secs(60)).unwrap();
    assert!(
        log.contains("differ from the artifact")
            && log.contains("src/parse.rs")
            && log.contains("src/quorum.rs"),
        "{log}"
    );
}

#[test]
fn index_output_shows_a_hostile_branch_name_inert() {
    // The branch name is the checkout's: `.git/HEAD` may name one holding an
    // escape sequence (a window-title OSC) and a forged second line.
    let co = Checkout::new();
    let branch = "refs/heads/x\u{1b}]0;pwned\u{7}\nforged";
    std::fs::write(co.dir().join(".git/HEAD"), format!("ref: {branch}\n")).unwrap();
    std::fs::create_dir_all(co.dir().join(".git/refs/heads")).unwrap();
    std::fs::write(co.dir().join(".git").join(branch), format!("{COMMIT}\n")).unwrap();
    let built = co.build();
    assert!(built.contains(COMMIT), "{built}");
    assert!(
        !built.contains('\u{1b}'),
        "raw ESC reached stdout: {built:?}"
    );
    assert_eq!(built.trim_end().lines().count(), 1, "{built:?}");
    let verify = co.verify(true);
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    assert!(!said.contains('\u{1b}'), "raw ESC reached stdout: {said:?}");
    assert!(
        said.contains("\\u{1B}") || said.contains("\\u001B") || said.contains("\\u{1b}"),
        "{said:?}"
    );
}
