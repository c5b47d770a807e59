//! A long-running server's answers on a real tree, timed over the stdio
//! protocol (issue 29): what `cgp serve workspace` does per query, in one
//! process, for profilers and old/new comparisons.
//!
//! ```sh
//! cargo build --release -p contextgraph-provider-workspace --example served_query
//! target/release/examples/served_query DIR CACHE_BASE [ROUNDS] [QUERIES]
//! valgrind --tool=callgrind target/release/examples/served_query DIR CACHE_BASE 1
//! ```
//!
//! Opens `DIR` with its index in `CACHE_BASE` (built on the first run,
//! loaded after), starts the file watcher as `cgp serve workspace` does
//! (`serve::keep_fresh`), waits until the watcher is trusted (the scan
//! before an answer skipped), then serves the provider with the SDK's
//! `serve` over two in-memory pipes and sends each goal `ROUNDS` times
//! (30 frames, 8000 tokens), timing each round trip: request line in,
//! reply line out. Prints the median and p95 over all round trips.
//!
//! `QUERIES` holds one goal per line; without it a fixed mix of prose,
//! identifier and question goals is asked. `CGP_SERVED_SCAN=1` measures
//! the same server with the scan before every answer (no watcher);
//! `CGP_SERVED_DUMP=FILE` writes the first pass's replies to FILE.
//! Under callgrind, the per-query instruction count is the inclusive cost
//! of `WorkspaceProvider as Provider>::query` (the provider's answer) and
//! of the SDK's `handle_line` (parsing, the honesty audit, serializing)
//! divided by the number of queries printed.

use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use contextgraph_provider_sdk::serve::{serve, ServeOptions};
use contextgraph_provider_workspace::serve::{keep_fresh, QUERY_FRESHNESS_DEADLINE};
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};

/// Asked when no QUERIES file is given: prose, identifiers and questions
/// of the kinds the retrieval benchmark holds, one per line (the file
/// `benches/served_cli_alternate.py` asks too).
const GOALS: &str = include_str!("../benches/served_goals.txt");

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, cache, rest @ ..] = args.as_slice() else {
        eprintln!("usage: served_query DIR CACHE_BASE [ROUNDS] [QUERIES]");
        std::process::exit(2);
    };
    let rounds: usize = rest.first().and_then(|r| r.parse().ok()).unwrap_or(20);
    let goals: Vec<String> = match rest.get(1) {
        Some(file) => std::fs::read_to_string(file)
            .unwrap_or_else(|e| {
                eprintln!("served_query: cannot read {file}: {e}");
                std::process::exit(1);
            })
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        None => GOALS.lines().map(str::to_owned).collect(),
    };
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.into()),
        ..WorkspaceOptions::default()
    };
    let opened = Instant::now();
    let (provider, source) = WorkspaceProvider::open(root, options).unwrap_or_else(|e| {
        eprintln!("served_query: {e}");
        std::process::exit(1);
    });
    let stats = provider.stats();
    eprintln!(
        "served_query: {source:?} in {:.1} s: {} files, {} chunks",
        opened.elapsed().as_secs_f64(),
        stats.files,
        stats.chunks
    );
    let scan_each = std::env::var_os("CGP_SERVED_SCAN").is_some_and(|v| v == "1");
    let (served, _watch) = if scan_each {
        (provider.with_fresh_queries(QUERY_FRESHNESS_DEADLINE), None)
    } else {
        let (served, watch) = keep_fresh(provider);
        if let Err(e) = served.refresh() {
            eprintln!("served_query: {e}");
        }
        let until = Instant::now() + Duration::from_secs(600);
        while served.workspace().scan_needed().is_some() {
            if Instant::now() > until {
                eprintln!("served_query: the watcher never became current");
                std::process::exit(1);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        (served, watch)
    };
    let trusted = served.clone();
    let (server_in, mut to_server) = std::io::pipe().expect("pipe");
    let (from_server, server_out) = std::io::pipe().expect("pipe");
    let server = std::thread::spawn(move || {
        let _ = serve(served, server_in, server_out, ServeOptions::default());
    });
    let mut replies = BufReader::new(from_server);
    let mut line = String::new();
    let mut ask = |request: &str, line: &mut String| {
        to_server
            .write_all(request.as_bytes())
            .and_then(|()| to_server.write_all(b"\n"))
            .expect("the server reads");
        line.clear();
        replies.read_line(line).expect("the server replies");
    };
    ask(
        r#"{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}"#,
        &mut line,
    );
    let requests: Vec<String> = goals
        .iter()
        .map(|g| {
            let goal = serde_json::to_string(g).expect("a string serializes");
            format!(
                r#"{{"type":"query","query":{{"goal":{goal},"max_frames":30,"max_tokens":8000}}}}"#
            )
        })
        .collect();
    // One unmeasured pass: file pages and the model's first use. Its
    // replies go to `CGP_SERVED_DUMP` when set, to `cmp` two builds'.
    let mut frames = 0usize;
    let mut bytes = 0usize;
    let mut dump = String::new();
    for r in &requests {
        ask(r, &mut line);
        dump.push_str(&line);
        let reply: serde_json::Value = serde_json::from_str(&line).expect("a JSON reply");
        frames += reply["result"]["frames"].as_array().map_or(0, Vec::len);
        bytes += line.len();
    }
    if let Some(path) = std::env::var_os("CGP_SERVED_DUMP") {
        std::fs::write(&path, &dump).expect("the dump is written");
    }
    let mut times: Vec<Duration> = Vec::with_capacity(rounds * requests.len());
    for _ in 0..rounds {
        for r in &requests {
            let started = Instant::now();
            ask(r, &mut line);
            times.push(started.elapsed());
        }
    }
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "{}: {} goals x {rounds} (+1 unmeasured), {} frames, {} reply bytes per pass: p50 {:.3} ms, p95 {:.3} ms, queries answered {}",
        if scan_each { "scan_before_each" } else { "watcher_trusted" },
        goals.len(),
        frames,
        bytes,
        at(0.5),
        at(0.95),
        requests.len() * (rounds + 1)
    );
    if !scan_each && trusted.workspace().scan_needed().is_some() {
        eprintln!("served_query: the watcher lost trust during the run: figures include scans");
    }
    drop(server);
}
