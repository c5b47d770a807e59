//! Indexing and query performance over a large real corpus, one run:
//! cold build (files/s, MB/s), index size vs source size, peak memory,
//! incremental re-index after touching one file, query latency p50/p99, a
//! cold query (load persisted index + first query) and a grep-style full
//! scan of the same tree for the same queries.
//!
//! `cargo bench -p contextgraph-provider-workspace --bench index_perf`
//!
//! Corpus: `$CGP_BENCH_CORPUS`, default `~/.cargo/registry/src` (present
//! once dependencies are fetched). It is copied into a temporary directory
//! first (the bench edits files), `$CGP_BENCH_COPIES` times (default: as many
//! as needed to exceed 10 000 files).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_testkit::corpus::{copy_tree, peak_rss_mib};
use contextgraph_types::ContextQuery;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Identifiers to query: names defined in the corpus (bounded, deterministic).
fn sample_queries(root: &Path, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(mut entries) =
            std::fs::read_dir(&dir).map(|e| e.flatten().map(|e| e.path()).collect::<Vec<_>>())
        else {
            continue;
        };
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") && out.len() < n {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                if let Some(name) = text
                    .lines()
                    .filter_map(|l| l.trim_start().strip_prefix("pub fn "))
                    .filter_map(|r| r.split(['(', '<']).next())
                    .find(|n| n.len() > 6)
                {
                    // Mix exact identifiers with prose-like queries.
                    if out.len() % 2 == 0 {
                        out.push(name.to_owned());
                    } else {
                        out.push(name.replace('_', " "));
                    }
                }
            }
        }
    }
    out
}

/// A grep-style scan: read every file under `root` and count lines
/// containing any query word (case-insensitive), like `grep -rciF`.
fn grep_scan(root: &Path, words: &[String]) -> usize {
    let mut hits = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                for line in text.lines() {
                    let l = line.to_lowercase();
                    if words.iter().any(|w| l.contains(w.as_str())) {
                        hits += 1;
                    }
                }
            }
        }
    }
    hits
}

/// Set (with [`LOAD_ONLY_CACHE`]) in the child process that measures a load
/// alone, so its peak RSS is the load's, not the build's.
const LOAD_ONLY_ROOT: &str = "CGP_BENCH_LOAD_ONLY_ROOT";
const LOAD_ONLY_CACHE: &str = "CGP_BENCH_LOAD_ONLY_CACHE";

/// Child mode: open the persisted index (no refresh), answer one query,
/// print load time and this process's peak RSS.
fn load_only(root: &Path, cache: &Path) {
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.to_path_buf()),
        ..WorkspaceOptions::default()
    };
    let t = Instant::now();
    let (p, source) = WorkspaceProvider::open(root, options).expect("open");
    let load = t.elapsed();
    let _ = p.query(&ContextQuery::new("parse config", 10, 8000));
    println!(
        "load-only process ({source:?}): open {:.0} ms, peak RSS {:.0} MiB",
        ms(load),
        peak_rss_mib()
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if let (Some(root), Some(cache)) = (
        std::env::var_os(LOAD_ONLY_ROOT),
        std::env::var_os(LOAD_ONLY_CACHE),
    ) {
        load_only(Path::new(&root), Path::new(&cache));
        return;
    }
    let corpus = std::env::var_os("CGP_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo/registry/src")
        });
    let work = tempfile::tempdir().expect("temp dir");
    let root = work.path().join("corpus");
    let (mut files, mut bytes) = (0usize, 0u64);
    let copies: usize = std::env::var("CGP_BENCH_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut copy = 0;
    while (copies == 0 && (files < 10_000 && copy < 4)) || copy < copies {
        let (f, b) = copy_tree(&corpus, &root.join(format!("copy{copy}")));
        files += f;
        bytes += b;
        copy += 1;
        if files == 0 {
            break;
        }
    }
    println!(
        "corpus: {} ({copy} copies) = {files} files, {:.1} MB",
        corpus.display(),
        bytes as f64 / 1e6
    );
    let cache = work.path().join("cache");
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.clone()),
        ..WorkspaceOptions::default()
    };

    let t = Instant::now();
    let (provider, _) = WorkspaceProvider::open(&root, options.clone()).expect("open");
    let cold = t.elapsed();
    let stats = provider.stats();
    let rss_after_build = peak_rss_mib();
    println!(
        "cold build: {:.1} s, {:.0} files/s, {:.2} MB/s ({} files indexed, {} chunks), 2 cores",
        cold.as_secs_f64(),
        files as f64 / cold.as_secs_f64(),
        bytes as f64 / 1e6 / cold.as_secs_f64(),
        stats.files,
        stats.chunks
    );
    println!(
        "index size on disk: {:.1} MB = {:.2}x source; peak RSS after build {:.0} MiB",
        stats.bytes_on_disk as f64 / 1e6,
        stats.bytes_on_disk as f64 / bytes.max(1) as f64,
        rss_after_build
    );

    // Incremental: append a line to one file, refresh; median of 7.
    let victim = {
        let mut stack = vec![root.clone()];
        let mut found = None;
        while let (None, Some(d)) = (&found, stack.pop()) {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    found = Some(p);
                    break;
                }
            }
        }
        found.expect("a .rs file in the corpus")
    };
    let mut incr = Vec::new();
    for i in 0..7 {
        let mut text = std::fs::read_to_string(&victim).unwrap_or_default();
        text.push_str(&format!("\n// bench edit {i}\n"));
        std::fs::write(&victim, text).expect("edit");
        let t = Instant::now();
        let report = provider.refresh().expect("refresh");
        incr.push(t.elapsed());
        assert_eq!(report.changed, 1, "{report:?}");
    }
    incr.sort();
    println!(
        "incremental re-index after touching one file: median {:.1} ms (min {:.1}, max {:.1})",
        ms(incr[3]),
        ms(incr[0]),
        ms(incr[6])
    );
    let t = Instant::now();
    let noop = provider.refresh().expect("refresh");
    println!(
        "no-change refresh (walk + stat {} files): {:.1} ms",
        noop.unchanged,
        ms(t.elapsed())
    );

    // Query latency.
    let queries = sample_queries(&root, 300);
    let mut lat = Vec::with_capacity(queries.len());
    for text in &queries {
        let q = ContextQuery::new(text.clone(), 10, 8000);
        let t = Instant::now();
        let r = provider.query(&q).expect("query");
        lat.push(t.elapsed());
        std::hint::black_box(r);
    }
    lat.sort();
    println!(
        "query latency over {} queries on {} files: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        lat.len(),
        stats.files,
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.95)),
        ms(percentile(&lat, 0.99))
    );
    println!("peak RSS: {:.0} MiB", peak_rss_mib());
    drop(provider);

    // Cold query: load the persisted index, answer one query; vs grep scan.
    let sample = &queries[queries.len() / 2];
    let t = Instant::now();
    let (loaded, source) = WorkspaceProvider::open(&root, options).expect("reopen");
    let load = t.elapsed();
    let t = Instant::now();
    let _ = loaded
        .query(&ContextQuery::new(sample.clone(), 10, 8000))
        .expect("query");
    let first = t.elapsed();
    let words: Vec<String> = sample
        .to_lowercase()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let t = Instant::now();
    let hits = grep_scan(&root, &words);
    let grep = t.elapsed();
    println!(
        "cold query ({source:?}): load {:.0} ms + first query {:.1} ms = {:.0} ms; grep-style full scan of the tree: {:.0} ms ({hits} matching lines); ratio grep/cold = {:.1}x, grep/warm-p50 = {:.0}x",
        ms(load),
        ms(first),
        ms(load + first),
        ms(grep),
        grep.as_secs_f64() / (load + first).as_secs_f64(),
        grep.as_secs_f64() / percentile(&lat, 0.5).as_secs_f64().max(1e-9),
    );
    drop(loaded);
    if let Ok(exe) = std::env::current_exe() {
        let _ = std::process::Command::new(exe)
            .env(LOAD_ONLY_ROOT, &root)
            .env(LOAD_ONLY_CACHE, &cache)
            .status();
    }
}
