//! The freshness check on an unchanged tree: how long `Workspace::refresh`
//! takes when nothing changed (a metadata scan against the index), which is
//! what every `cgp context` and MCP answer now pays before searching.
//!
//! ```text
//! cargo run --release -p contextgraph-search --example freshness_check -- DIR [RUNS]
//! ```
//!
//! The index is cached under `$TMPDIR/cgp-freshness-check` (the first run
//! builds it; later runs load it). Prints the walk alone and the whole
//! check: min, p50, p90 over RUNS (default 30).

use std::time::{Duration, Instant};

use contextgraph_search::walk::walk;
use contextgraph_search::{CacheLocation, Workspace, WorkspaceOptions};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn summary(name: &str, mut times: Vec<Duration>) {
    times.sort();
    println!(
        "{name:<28} min {:>7.1} ms  p50 {:>7.1} ms  p90 {:>7.1} ms  (n={})",
        times[0].as_secs_f64() * 1e3,
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.9).as_secs_f64() * 1e3,
        times.len()
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: freshness_check DIR [RUNS]")?;
    let runs: usize = args.next().map_or(Ok(30), |r| r.parse())?;
    let cache = std::env::temp_dir().join("cgp-freshness-check");
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache),
        progress: true,
        ..WorkspaceOptions::default()
    };
    let started = Instant::now();
    let (ws, source) = Workspace::open(&dir, options.clone())?;
    let report = ws.refresh()?;
    println!(
        "open: {source:?} in {:.2} s; {} files, {} chunks; catch-up refresh {:?} changed",
        started.elapsed().as_secs_f64(),
        ws.stats().files,
        ws.stats().chunks,
        report.changed_anything()
    );
    let mut walks = Vec::with_capacity(runs);
    let mut checks = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let w = walk(ws.root(), &options.walk);
        walks.push(t.elapsed());
        std::hint::black_box(w);
        let t = Instant::now();
        let report = ws.refresh()?;
        checks.push(t.elapsed());
        assert!(
            !report.changed_anything(),
            "the tree changed during the run"
        );
    }
    summary("walk (metadata scan)", walks);
    summary("freshness check (refresh)", checks);
    Ok(())
}
