//! Run a file of queries against a workspace with a persistent cache, for
//! profilers and before/after comparisons of the ranker: the first run
//! builds the index into the cache, later runs only load it.
//!
//! ```sh
//! cargo build --release -p contextgraph-provider-workspace --example query_profile
//! target/release/examples/query_profile DIR CACHE_BASE QUERIES [ROUNDS]
//! perf record -g target/release/examples/query_profile DIR CACHE_BASE QUERIES 5
//! ```
//!
//! `QUERIES` holds one goal per line. Prints the p50, p95 and p99 latency
//! of one `query` (10 frames, 8000 tokens) over all rounds. With
//! `CGP_SHOW_FRAMES=1` it also prints each goal's frames (score, token
//! cost, id) once, to read how far below the best one the tail scores.

use std::time::{Duration, Instant};

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::display_text::for_terminal;
use contextgraph_types::ContextQuery;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, cache, queries, rest @ ..] = args.as_slice() else {
        eprintln!("usage: query_profile DIR CACHE_BASE QUERIES [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = rest.first().and_then(|r| r.parse().ok()).unwrap_or(3);
    let goals: Vec<String> = match std::fs::read_to_string(queries) {
        Ok(text) => text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        Err(e) => {
            eprintln!("query_profile: cannot read {queries}: {e}");
            std::process::exit(1);
        }
    };
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.into()),
        ..WorkspaceOptions::default()
    };
    let (provider, source) = match WorkspaceProvider::open(root, options) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("query_profile: {e}");
            std::process::exit(1);
        }
    };
    if std::env::var_os("CGP_SHOW_FRAMES").is_some() {
        for goal in &goals {
            println!("== {}", for_terminal(goal));
            match provider.query(&ContextQuery::new(goal.clone(), 64, 8000)) {
                Ok(answer) => {
                    for f in &answer.frames {
                        // Ids hold the workspace's file names: shown inert.
                        println!(
                            "{:>8.4} {:>6} {}",
                            f.score,
                            contextgraph_types::token_cost_for(f.content.as_deref()),
                            for_terminal(&f.id)
                        );
                    }
                }
                Err(e) => println!("error: {}", for_terminal(&e.to_string())),
            }
        }
    }
    let mut latencies: Vec<Duration> = Vec::with_capacity(goals.len() * rounds);
    for _ in 0..rounds {
        for goal in &goals {
            let started = Instant::now();
            let answer = provider.query(&ContextQuery::new(goal.clone(), 10, 8000));
            latencies.push(started.elapsed());
            if let Err(e) = answer {
                eprintln!("query_profile: {goal:?}: {}", for_terminal(&e.to_string()));
                std::process::exit(1);
            }
        }
    }
    latencies.sort();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 - 1.0) * q).round() as usize;
        latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "{source:?}: {} queries x {rounds}: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        goals.len(),
        at(0.5),
        at(0.95),
        at(0.99)
    );
}
