//! The fan-out benchmark of issue 28, item 4 (not a test: it reports figures).
//!
//! Fifty HTTP shards on loopback (`tests/it/common/shards.rs`: the real
//! HTTP server adapter in-process, each shard a word-overlap search over a
//! tiny repository), one `cgp.toml` listing them all (built-ins off), an
//! `org-tenant` receipt for each granted in one `cgp consent grant`. Then a
//! default `cgp context` (the real binary, the configured 8000-token
//! budget) is run `CGP_BENCH_RUNS` times (30, after 3 warm-ups), each
//! timed from spawn to exit. The shards' own search time is recorded in
//! the shards and reported apart: per run, the longest one (the shards
//! search side by side, so that is what the run waited for at most) and
//! the sum (the CPU they took on this machine, which the host shares).
//!
//! Target: p50 of a run, less its longest shard search, <= 50 ms.
//! Baselines in the same run: the same command against 1 shard.
//!
//! `cargo bench -p contextgraph-cli --bench fanout`. Loopback only; every
//! run is bounded (a shard answers at once) and the fleet stops when the
//! bench ends.

#[allow(dead_code)]
#[path = "../tests/it/common/shards.rs"]
mod shards;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use contextgraph_testkit::sandbox::Sandbox;
use shards::{Fleet, Role, ShardSpec};

const CGP: &str = env!("CARGO_BIN_EXE_cgp");
const GOAL: &str = "how does the retry backoff double the delay after each attempt";

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let i = ((v.len() as f64 - 1.0) * q).round() as usize;
    v[i.min(v.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Figures {
    wall: Vec<f64>,
    longest_search: Vec<f64>,
    total_search: Vec<f64>,
    accepted: usize,
}

/// `n` shards, granted, then `runs` timed `cgp context` runs.
fn measure(n: usize, runs: usize, warmup: usize) -> Figures {
    let s = Sandbox::new(CGP);
    let fleet = Fleet::start(
        (0..n)
            .map(|i| ShardSpec {
                name: format!("shard-{i:02}"),
                repo: i,
                role: Role::Answers,
            })
            .collect(),
    );
    s.write("ws/cgp.toml", &fleet.config(|_| 10_000));
    let names: Vec<String> = fleet.shards.iter().map(|s| s.spec.name.clone()).collect();
    let mut grant = vec!["consent", "grant"];
    grant.extend(names.iter().map(String::as_str));
    grant.extend(["--scope", "org-tenant"]);
    let t = Instant::now();
    let out = s.run(&grant);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!(
        "{n} shard(s): one `cgp consent grant` of {n} org-tenant receipts: {:.1} ms",
        ms(t.elapsed())
    );
    let mut figures = Figures {
        wall: Vec::new(),
        longest_search: Vec::new(),
        total_search: Vec::new(),
        accepted: 0,
    };
    let taken = |fleet: &Fleet| -> Vec<Vec<u64>> {
        fleet
            .shards
            .iter()
            .map(|s| {
                std::mem::take(
                    &mut *s
                        .counters
                        .search_ns
                        .lock()
                        .unwrap_or_else(|p| p.into_inner()),
                )
            })
            .collect()
    };
    for run in 0..warmup + runs {
        taken(&fleet);
        let t = Instant::now();
        let out = s.run(&["context", GOAL, "--json", "--no-input"]);
        let wall = t.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let searches: Vec<u64> = taken(&fleet).into_iter().flatten().collect();
        if run < warmup {
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        figures.accepted = v["providers"]
            .as_array()
            .map(|p| p.iter().filter(|p| p["status"] == "accepted").count())
            .unwrap_or(0);
        figures.wall.push(ms(wall));
        figures
            .longest_search
            .push(searches.iter().copied().max().unwrap_or(0) as f64 / 1e6);
        figures
            .total_search
            .push(searches.iter().sum::<u64>() as f64 / 1e6);
    }
    let queries: usize = fleet
        .shards
        .iter()
        .map(|s| s.counters.queries.load(Ordering::SeqCst))
        .sum();
    assert_eq!(
        queries,
        n * (warmup + runs),
        "every shard asked once per run"
    );
    figures
}

fn report(label: &str, f: &Figures) {
    let less: Vec<f64> = f
        .wall
        .iter()
        .zip(&f.longest_search)
        .map(|(w, s)| w - s)
        .collect();
    println!(
        "{label}: {} runs, {} shards accepted per run\n  \
         cgp context wall time: p50 {:.1} ms, p90 {:.1} ms, min {:.1} ms\n  \
         shards' own search time per run: longest p50 {:.3} ms, sum p50 {:.3} ms\n  \
         wall less the longest shard search: p50 {:.1} ms (target <= 50 ms)",
        f.wall.len(),
        f.accepted,
        median(f.wall.clone()),
        quantile(f.wall.clone(), 0.9),
        f.wall.iter().copied().fold(f64::INFINITY, f64::min),
        median(f.longest_search.clone()),
        median(f.total_search.clone()),
        median(less),
    );
}

fn main() {
    let runs = env_or("CGP_BENCH_RUNS", 30);
    let shards = env_or("CGP_BENCH_SHARDS", 50);
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average at start: {}", load.trim());
    }
    let one = measure(1, runs, 3);
    report("baseline, 1 shard", &one);
    let many = measure(shards, runs, 3);
    report(&format!("{shards} shards"), &many);
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average at end: {}", load.trim());
    }
}
