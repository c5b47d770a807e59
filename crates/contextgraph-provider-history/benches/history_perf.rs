//! Speed of the history index (issue 27's targets): cold build per 1,000
//! commits, warm open (persisted index, `HEAD` unchanged), and query
//! latency (p50, p95) for goals made of commit subjects, on each bench
//! repository and this one. `cargo bench -p contextgraph-provider-history
//! --bench history_perf [-- NAME...]` (names filter the rows).
//!
//! `CGP_HISTORY_LARGE=DIR` adds a row for the repository at `DIR`, for the
//! scale target (a 100,000-commit history opens in well under a second
//! warm): `scripts/synthetic-history.py DIR 100000 REPO...` writes one.

mod common;

use std::time::{Duration, Instant};

use contextgraph_provider_history::{HistoryOptions, HistoryProvider};
use contextgraph_provider_sdk::Provider;
use contextgraph_search::CacheLocation;
use contextgraph_types::ContextQuery;

fn main() {
    let mut repos: Vec<(String, std::path::PathBuf)> =
        vec![("contextgraph".into(), common::repo_root())];
    for (name, _) in common::BUNDLES {
        match common::clone_of(name) {
            Ok(dir) => repos.push(((*name).into(), dir)),
            Err(e) => eprintln!("skipping {name}: {e}"),
        }
    }
    if let Some(dir) = std::env::var_os("CGP_HISTORY_LARGE") {
        repos.push(("large".into(), std::path::PathBuf::from(dir)));
    }
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    repos.retain(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f)));
    println!("| repository | commits | cold build | per 1,000 commits | warm open | query p50 | query p95 |");
    println!("|---|---|---|---|---|---|---|");
    for (name, dir) in repos {
        let mut colds = Vec::new();
        let mut commits = 0;
        let cache = tempfile::tempdir().expect("temp");
        for _ in 0..cold_rounds() {
            let fresh = tempfile::tempdir().expect("temp");
            let began = Instant::now();
            let p = HistoryProvider::open(&dir, options(fresh.path())).expect("open");
            // The index is built on first use: time the open and that use.
            commits = p.commits();
            colds.push(began.elapsed());
        }
        colds.sort();
        let cold = colds[colds.len() / 2].as_secs_f64();
        let built = HistoryProvider::open(&dir, options(cache.path())).expect("build");
        std::hint::black_box(built.commits());
        drop(built);
        let mut warms = Vec::new();
        for _ in 0..20 {
            let began = Instant::now();
            let p = HistoryProvider::open(&dir, options(cache.path())).expect("open");
            // Loaded on first use: the open and the load.
            std::hint::black_box(p.commits());
            warms.push(began.elapsed());
        }
        warms.sort();
        let p = HistoryProvider::open(&dir, options(cache.path())).expect("open");
        let goals = goals(&dir, 100);
        let mut queries: Vec<Duration> = Vec::new();
        for g in &goals {
            let q = ContextQuery::new(g.as_str(), 8, 4_000);
            let began = Instant::now();
            let r = p.query(&q).expect("query");
            queries.push(began.elapsed());
            std::hint::black_box(r);
        }
        queries.sort();
        println!(
            "| {name} | {commits} | {:.2} s | {:.2} s | {:.1} ms | {:.2} ms | {:.2} ms |",
            cold,
            cold * 1000.0 / commits.max(1) as f64,
            percentile_ms(&warms, 0.5),
            percentile_ms(&queries, 0.5),
            percentile_ms(&queries, 0.95),
        );
    }
}

/// Cold builds per repository (`CGP_HISTORY_COLD_ROUNDS`, default 3; the
/// median is reported): one is enough for a 100,000-commit history.
fn cold_rounds() -> usize {
    std::env::var("CGP_HISTORY_COLD_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3)
}

fn options(cache: &std::path::Path) -> HistoryOptions {
    HistoryOptions {
        cache: CacheLocation::Base(cache.to_path_buf()),
        // Serve the plain goals (by default they get no frame, which would
        // time the ranking alone): the latency of an answer with frames.
        plain_goal_frames: u32::MAX,
        ..HistoryOptions::default()
    }
}

/// Subjects of every n-th commit of `dir`, at most `max`.
fn goals(dir: &std::path::Path, max: usize) -> Vec<String> {
    let repo = git2::Repository::open(dir).expect("repo");
    let mut walk = repo.revwalk().expect("walk");
    walk.push_head().expect("head");
    let ids: Vec<git2::Oid> = walk.filter_map(Result::ok).collect();
    let step = (ids.len() / max).max(1);
    ids.iter()
        .step_by(step)
        .take(max)
        .filter_map(|id| repo.find_commit(*id).ok())
        .filter_map(|c| c.summary().map(str::to_owned))
        .collect()
}

/// `sorted[p]` of a sorted list of durations, in milliseconds.
pub fn percentile_ms(sorted: &[std::time::Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}
