//! Throughput of a provider *process* over stdio, whatever it is written
//! in: the harness spawns a command, handshakes, and pumps small correlated
//! queries with 64 in flight, measuring answered queries per second. The
//! Rust SDK, the Python SDK and the TypeScript SDK run the same "facts"
//! provider (the same data file, the same answer) so their figures compare.
//!
//! ```text
//! cargo bench -p contextgraph-provider-sdk --bench spawned
//! CGP_BENCH_PROVIDERS='py=python3 sdk/python/examples/facts.py;ts=node sdk/typescript/examples/facts.js' \
//!   cargo bench -p contextgraph-provider-sdk --bench spawned
//! ```
//!
//! Without `CGP_BENCH_PROVIDERS` it measures the Rust facts provider (this
//! bench binary re-run as one) and, when found on PATH, the Python and
//! TypeScript examples of this repository. Each provider gets a warm-up,
//! then `ROUNDS` rounds of `QUERIES` queries; the report gives the median
//! round and the range, and each median's ratio to the Rust one.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{sync_channel, TrySendError};
use std::thread;
use std::time::{Duration, Instant};

use contextgraph_provider_sdk::{pack, serve_stdio, FrameBuilder, Provider, ProviderError};
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, DataFlow, FrameKind,
    FrameVerdict, ProviderInfo, QueryCapability, Timestamp, Verdict, VerifyRequest, VerifyResponse,
};

const IN_FLIGHT: usize = 64;
/// Queries written per write when the window has room.
const BATCH: usize = 16;
const WARMUP: usize = 1_000;
const QUERIES: usize = 5_000;
const ROUNDS: usize = 7;
const SERVE_VAR: &str = "CGP_BENCH_SERVE_FACTS";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn words(text: &str) -> Vec<String> {
    let mut w: Vec<String> = text
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    w.sort();
    w.dedup();
    w
}

/// The facts example, in Rust: the same data and the same answers as
/// `sdk/python/examples/facts.py` and `sdk/typescript/examples/facts.js`.
struct Facts {
    frames: Vec<(ContextFrame, Vec<String>)>,
}

impl Facts {
    fn load(path: &Path) -> Facts {
        let text = std::fs::read_to_string(path).expect("facts.json is readable");
        let rows: Vec<serde_json::Value> = serde_json::from_str(&text).expect("facts.json is JSON");
        let field = |r: &serde_json::Value, k: &str| r[k].as_str().unwrap_or_default().to_owned();
        let mut rows: Vec<_> = rows.iter().collect();
        rows.sort_by_key(|r| Timestamp::parse(&field(r, "valid_from")).ok());
        let mut by_key: BTreeMap<String, Vec<&serde_json::Value>> = BTreeMap::new();
        for r in rows {
            by_key.entry(field(r, "key")).or_default().push(r);
        }
        let mut frames = Vec::new();
        for (key, versions) in &by_key {
            for (i, r) in versions.iter().enumerate() {
                let from = Timestamp::parse(&field(r, "valid_from")).expect("valid_from is F4");
                let text = format!("{key} = {}", field(r, "value"));
                let mut b = FrameBuilder::new(
                    format!("{key}@{}", field(r, "valid_from")),
                    FrameKind::Fact,
                    key.clone(),
                    text.clone(),
                )
                .valid_from(from)
                .citation_label(format!("{key} (from {})", field(r, "valid_from")));
                if let Some(next) = versions.get(i + 1) {
                    b = b.valid_to(Timestamp::parse(&field(next, "valid_from")).expect("F4"));
                }
                frames.push((b.build(), words(&format!("{text} {}", field(r, "note")))));
            }
        }
        Facts { frames }
    }
}

impl Provider for Facts {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "facts-example".into(),
            version: "0.1.0".into(),
            data_flow: DataFlow {
                reads: true,
                ..DataFlow::default()
            },
        }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Fact],
            },
            correlation: true,
            verify: true,
            ..Capabilities::default()
        }
    }
    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let wanted = words(query.match_text());
        let pin = query
            .as_of
            .as_deref()
            .and_then(|t| Timestamp::parse(t).ok());
        let parse = |t: &Option<String>| t.as_deref().and_then(|t| Timestamp::parse(t).ok());
        let mut candidates = Vec::new();
        for (f, terms) in &self.frames {
            let hits = wanted
                .iter()
                .filter(|w| terms.binary_search(w).is_ok())
                .count();
            if hits == 0 {
                continue;
            }
            if pin.is_some_and(|p| parse(&f.valid_from).is_some_and(|from| from > p)) {
                continue;
            }
            if let Some(end) = parse(&f.valid_to) {
                if pin.is_none_or(|p| end <= p) {
                    continue;
                }
            }
            let mut f = f.clone();
            f.score = hits as f32 / wanted.len() as f32;
            candidates.push(f);
        }
        Ok(pack(candidates, query))
    }
    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        let verdicts = request
            .frames
            .iter()
            .map(|id| {
                let held = self.frames.iter().find(|(f, _)| f.id == id.frame_id);
                let verdict = match (held, &id.content_digest) {
                    (None, _) => Verdict::Gone,
                    (Some(_), None) => Verdict::Unknown,
                    (Some((f, _)), Some(d)) if f.content_digest.as_ref() == Some(d) => {
                        Verdict::Valid
                    }
                    (Some((f, _)), Some(_)) => Verdict::Stale {
                        replacement_digest: f.content_digest.clone(),
                    },
                };
                FrameVerdict {
                    frame: id.clone(),
                    verdict,
                }
            })
            .collect();
        VerifyResponse { verdicts }
    }
}

fn query_line(i: usize) -> String {
    format!("{{\"type\":\"query\",\"id\":\"q{i}\",\"query\":{{\"goal\":\"retry policy backoff\",\"max_frames\":5,\"max_tokens\":1000}}}}\n")
}

/// A spawned provider, handshake done.
struct Running {
    child: Child,
    stdin: std::process::ChildStdin,
    replies: BufReader<std::process::ChildStdout>,
}

fn start(command: &[String], env: &[(&str, String)]) -> Running {
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]).current_dir(repo_root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {command:?}: {e}"));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut replies = BufReader::new(child.stdout.take().expect("piped stdout"));
    stdin
        .write_all(b"{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}\n")
        .expect("handshake written");
    let mut ack = String::new();
    replies.read_line(&mut ack).expect("ack read");
    assert!(
        ack.contains("\"handshake_ack\""),
        "{command:?} answered the handshake with {ack}"
    );
    assert!(
        ack.contains("\"correlation\":true"),
        "{command:?} is not correlated: {ack}"
    );
    Running {
        child,
        stdin,
        replies,
    }
}

/// Send `n` queries keeping at most `IN_FLIGHT` outstanding; the seconds taken.
fn pump(r: &mut Running, n: usize) -> f64 {
    let (tokens_tx, tokens_rx) = sync_channel::<()>(IN_FLIGHT);
    let started = Instant::now();
    thread::scope(|s| {
        let stdin = &mut r.stdin;
        s.spawn(move || {
            let mut batch = String::new();
            let mut flush = |batch: &mut String| {
                stdin.write_all(batch.as_bytes()).expect("query written");
                stdin.flush().expect("flushed");
                batch.clear();
            };
            for i in 0..n {
                // A full window: send what is queued before waiting for a
                // reply to free a slot, so every counted query is in flight.
                if let Err(TrySendError::Full(())) = tokens_tx.try_send(()) {
                    flush(&mut batch);
                    tokens_tx.send(()).expect("reader alive");
                }
                batch.push_str(&query_line(i));
                // Otherwise write in small batches, as a pipelining host would.
                if (i + 1).is_multiple_of(BATCH) {
                    flush(&mut batch);
                }
            }
            flush(&mut batch);
        });
        let mut line = String::new();
        for _ in 0..n {
            line.clear();
            r.replies.read_line(&mut line).expect("reply read");
            assert!(
                line.starts_with("{\"type\":\"frames\""),
                "unexpected reply {line}"
            );
            tokens_rx.recv().expect("a token per query");
        }
    });
    started.elapsed().as_secs_f64()
}

fn measure(label: &str, command: &[String], env: &[(&str, String)]) -> f64 {
    let mut r = start(command, env);
    pump(&mut r, WARMUP);
    let mut rates: Vec<f64> = (0..ROUNDS)
        .map(|_| QUERIES as f64 / pump(&mut r, QUERIES))
        .collect();
    let _ = r.stdin.write_all(b"{\"type\":\"shutdown\"}\n");
    drop(r.stdin);
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let _ = r.child.kill();
    rates.sort_by(f64::total_cmp);
    let median = rates[ROUNDS / 2];
    println!(
        "{label:<12} median {median:>9.0} queries/s  (range {:.0}–{:.0}, {ROUNDS} rounds of {QUERIES}, {IN_FLIGHT} in flight)",
        rates[0],
        rates[ROUNDS - 1]
    );
    median
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

fn main() {
    let facts = repo_root().join("sdk/python/examples/facts.json");
    if std::env::var_os(SERVE_VAR).is_some() {
        let path = std::env::var(SERVE_VAR).map(PathBuf::from).unwrap_or(facts);
        if let Err(e) = serve_stdio(Facts::load(&path)) {
            eprintln!("facts: {e}");
        }
        return;
    }
    // `cargo bench` passes --bench; a filter argument is not supported.
    let me = std::env::current_exe()
        .expect("own path")
        .display()
        .to_string();
    let mut providers: Vec<(String, Vec<String>)> = vec![("rust".into(), vec![me])];
    match std::env::var("CGP_BENCH_PROVIDERS") {
        Ok(list) => providers.extend(list.split(';').filter(|s| !s.trim().is_empty()).map(
            |entry| {
                let (label, command) = entry.split_once('=').unwrap_or(("provider", entry));
                (
                    label.trim().to_owned(),
                    command.split_whitespace().map(str::to_owned).collect(),
                )
            },
        )),
        Err(_) => {
            if on_path("python3") {
                providers.push((
                    "python".into(),
                    vec!["python3".into(), "sdk/python/examples/facts.py".into()],
                ));
            }
            if on_path("node") {
                providers.push((
                    "typescript".into(),
                    vec!["node".into(), "sdk/typescript/examples/facts.js".into()],
                ));
            }
        }
    }
    let env = [(SERVE_VAR, facts.display().to_string())];
    let mut rust = None;
    for (label, command) in &providers {
        let median = measure(label, command, if label == "rust" { &env } else { &[] });
        match rust {
            None => rust = Some(median),
            Some(base) => println!("{:<12} {:.2}× the Rust SDK's median", "", median / base),
        }
    }
}
