//! The freshness check on a large corpus, in one run, interleaved: the quick
//! check (stat the known paths, list only directories whose stamp changed)
//! against the full walk every refresh did before it; one edited file
//! re-indexed and found; and the warm path of a new process (load the saved
//! index, check, answer one query) with its load time and peak memory.
//!
//! `cargo bench -p contextgraph-search --features bench-internals --bench freshness`
//!
//! Corpus: `$CGP_BENCH_CORPUS`, default `~/.cargo/registry/src`, copied
//! once into `$CGP_BENCH_WORK` (default: a temporary directory; when given
//! and already filled, reused with its index cache, so a second run skips
//! the copy and the cold build). Rounds: `$CGP_BENCH_ROUNDS` (default 15).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use contextgraph_search::{FileCache, SearchOptions, Workspace};

#[path = "support/corpus.rs"]
mod corpus;
use corpus::{copy_tree, median, ms, options, peak_rss_mib};

const CHILD: &str = "CGP_FRESH_BENCH_CHILD";

/// CPU time (user + system, all threads) this process has used, in ms:
/// on a loaded machine the wall clock measures the queue as much as the
/// work, this measures the work.
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the line, in clock ticks (100 per second).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) * 10.0
}

fn p90(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get((v.len() * 9 / 10).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or(f64::NAN)
}

fn found(ws: &Workspace, goal: &str, path: &str) -> bool {
    let view = ws.view();
    let mut files = FileCache::default();
    view.search(goal, &SearchOptions::default(), &mut files)
        .iter()
        .any(|h| view.chunk(h.slot).is_some_and(|(p, _)| p == path))
}

/// Child mode: a new process's warm path. Prints
/// `open_ms check_ms query_ms rss_mib`.
fn child(mode: &str, tree: &Path, cache: &Path) {
    let t = Instant::now();
    let (ws, _) = Workspace::open(tree, options(cache)).expect("open");
    let open = t.elapsed();
    if mode == "loop" {
        // For a profiler: the quick check over and over.
        for _ in 0..40 {
            ws.refresh().expect("refresh");
        }
        return;
    }
    let t = Instant::now();
    let report = if mode == "walk" {
        ws.refresh_by_full_walk()
    } else {
        ws.refresh()
    }
    .expect("refresh");
    let check = t.elapsed();
    assert!(report.pending.is_empty());
    let t = Instant::now();
    let view = ws.view();
    let mut files = FileCache::default();
    let hits = view.search(
        "parse the configuration file",
        &SearchOptions::default(),
        &mut files,
    );
    let query = t.elapsed();
    assert!(!hits.is_empty());
    println!(
        "{:.1} {:.1} {:.1} {:.1}",
        ms(open),
        ms(check),
        ms(query),
        peak_rss_mib()
    );
}

fn main() {
    let work = std::env::var_os("CGP_BENCH_WORK").map(PathBuf::from);
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = work.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let tree = base.join("tree");
    let cache = base.join("cache");
    if let Ok(mode) = std::env::var(CHILD) {
        child(&mode, &tree, &cache);
        return;
    }
    let rounds: usize = std::env::var("CGP_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    if !tree.exists() {
        let corpus = std::env::var_os("CGP_BENCH_CORPUS")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/registry/src"))
            })
            .expect("set CGP_BENCH_CORPUS");
        std::fs::create_dir_all(&tree).expect("mkdir");
        let t = Instant::now();
        let (files, _) = copy_tree(&corpus, &tree);
        println!(
            "copied {files} files from {} in {:.1} s",
            corpus.display(),
            t.elapsed().as_secs_f64()
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at start: {}", load.trim());

    let t = Instant::now();
    let (ws, source) = Workspace::open(&tree, options(&cache)).expect("open");
    println!(
        "open ({source:?}): {:.1} s, {} files, {} chunks",
        t.elapsed().as_secs_f64(),
        ws.stats().files,
        ws.stats().chunks
    );
    // The first check after a build re-reads the files whose stamps were
    // too fresh to trust then (all of them, right after a copy).
    let t = Instant::now();
    let first = ws.refresh().expect("refresh");
    println!(
        "first check: {:.1} ms ({} unchanged, {} touched)",
        ms(t.elapsed()),
        first.unchanged,
        first.touched
    );

    // Unchanged tree: quick check vs full walk, interleaved.
    let (mut quick, mut walk) = (Vec::new(), Vec::new());
    let (mut quick_cpu, mut walk_cpu) = (0.0, 0.0);
    for _ in 0..rounds {
        let (t, c) = (Instant::now(), cpu_ms());
        let r = ws.refresh().expect("refresh");
        quick.push(ms(t.elapsed()));
        quick_cpu += cpu_ms() - c;
        assert!(!r.changed_anything(), "{r:?}");
        let (t, c) = (Instant::now(), cpu_ms());
        let r = ws.refresh_by_full_walk().expect("refresh");
        walk.push(ms(t.elapsed()));
        walk_cpu += cpu_ms() - c;
        assert!(!r.changed_anything(), "{r:?}");
    }
    // One quick check after the last full walk, which rebuilt the tree.
    ws.refresh().expect("refresh");
    println!(
        "unchanged tree, {rounds} rounds: quick check p50 {:.1} ms (p90 {:.1}) | full walk p50 {:.1} ms (p90 {:.1}) | ratio {:.1}x",
        median(quick.clone()),
        p90(quick.clone()),
        median(walk.clone()),
        p90(walk.clone()),
        median(walk) / median(quick)
    );
    println!(
        "unchanged tree, CPU time per check (user + system, all threads): quick check {:.1} ms | full walk {:.1} ms",
        quick_cpu / rounds as f64,
        walk_cpu / rounds as f64
    );

    // One edited file: re-indexed and found.
    let target = find_rs(&tree).expect("a .rs file in the corpus");
    let rel = target
        .strip_prefix(&tree)
        .expect("inside")
        .to_string_lossy()
        .into_owned();
    let original = std::fs::read(&target).expect("read");
    let (mut quick, mut walk) = (Vec::new(), Vec::new());
    let (mut quick_cpu, mut walk_cpu) = (0.0, 0.0);
    let edits = rounds.min(9);
    for i in 0..edits {
        for full in [false, true] {
            let name = format!("freshness_probe_{i}_{}", u8::from(full));
            let mut bytes = original.clone();
            bytes.extend_from_slice(format!("\npub fn {name}() {{}}\n").as_bytes());
            std::fs::write(&target, &bytes).expect("write");
            let (t, c) = (Instant::now(), cpu_ms());
            let r = if full {
                ws.refresh_by_full_walk()
            } else {
                ws.refresh()
            }
            .expect("refresh");
            assert!(found(&ws, &name, &rel), "{name} not found ({r:?})");
            let d = ms(t.elapsed());
            if full { &mut walk } else { &mut quick }.push(d);
            *if full { &mut walk_cpu } else { &mut quick_cpu } += cpu_ms() - c;
        }
    }
    std::fs::write(&target, &original).expect("restore");
    ws.refresh().expect("refresh");
    println!(
        "one edited file re-indexed and found: quick check p50 {:.1} ms (CPU {:.1} ms) | full walk p50 {:.1} ms (CPU {:.1} ms)",
        median(quick),
        quick_cpu / edits as f64,
        median(walk),
        walk_cpu / edits as f64
    );
    drop(ws);

    // A new process: load, check, answer; interleaved.
    let exe = std::env::current_exe().expect("exe");
    let mut rows: [Vec<[f64; 4]>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..5 {
        for (i, mode) in ["quick", "walk"].iter().enumerate() {
            let out = Command::new(&exe)
                .env(CHILD, mode)
                .env("CGP_BENCH_WORK", &base)
                .output()
                .expect("child");
            let text = String::from_utf8_lossy(&out.stdout);
            let v: Vec<f64> = text
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if let [a, b, c, d] = v[..] {
                rows[i].push([a, b, c, d]);
            } else {
                eprintln!(
                    "child failed: {text} {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    for (i, label) in ["quick check", "full walk"].iter().enumerate() {
        let col = |k: usize| median(rows[i].iter().map(|r| r[k]).collect());
        println!(
            "new process, {label}: open (load) {:.0} ms, check {:.1} ms, query {:.1} ms, total {:.0} ms, peak RSS {:.0} MiB",
            col(0),
            col(1),
            col(2),
            col(0) + col(1) + col(2),
            col(3)
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at end: {}", load.trim());
}

/// A deterministic `.rs` file of the corpus (the first in sorted order
/// under the first sorted directories).
fn find_rs(dir: &Path) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in &entries {
        if p.is_file() && p.extension().is_some_and(|e| e == "rs") {
            return Some(p.clone());
        }
    }
    entries
        .iter()
        .filter(|p| p.is_dir())
        .find_map(|p| find_rs(p))
}
