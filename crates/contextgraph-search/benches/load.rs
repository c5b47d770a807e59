//! The warm path of a new process on a large corpus: open the saved index,
//! run the freshness check, answer one query; this build against a
//! baseline build, interleaved in one run. Each run is its own process
//! (under `/usr/bin/time`, for its CPU time and peak RSS whatever the
//! binary reports), so the page cache is warm and the heap is not.
//!
//! ```text
//! CGP_BENCH_BASELINE=/path/to/old/freshness-bench-binary \
//!   cargo bench -p contextgraph-search --features bench-internals --bench load
//! ```
//!
//! The baseline is the `freshness` bench binary of the build to compare
//! against (its child mode prints the same four figures); without it only
//! this build is measured. Corpus and work directory as in `freshness`:
//! `$CGP_BENCH_CORPUS` (default `~/.cargo/registry/src`) copied once into
//! `$CGP_BENCH_WORK` (default: a temporary directory); the baseline keeps
//! its own cache beside ours (`baseline/`), as its format differs. Rounds:
//! `$CGP_BENCH_ROUNDS` (default 7).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use contextgraph_search::{FileCache, SearchOptions, Workspace};

#[path = "support/corpus.rs"]
mod corpus;
use corpus::{copy_tree, median, ms, options, peak_rss_mib};

const CHILD: &str = "CGP_LOAD_BENCH_CHILD";
/// The `freshness` bench's child switch (the baseline binary's).
const BASELINE_CHILD: &str = "CGP_FRESH_BENCH_CHILD";

/// Child mode: a new process's warm path. Prints
/// `open_ms check_ms query_ms rss_mib` (as the `freshness` child does).
fn child(tree: &Path, cache: &Path) {
    let t = Instant::now();
    let (ws, _) = Workspace::open(tree, options(cache)).expect("open");
    let open = t.elapsed();
    let t = Instant::now();
    let report = ws.refresh().expect("refresh");
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

/// One measured child: its four figures, then wall s, user + system CPU s
/// and max RSS KiB from `/usr/bin/time`.
fn run(cmd: &mut Command) -> Option<[f64; 7]> {
    let mut timed = Command::new("/usr/bin/time");
    timed.args(["-f", "TIME %e %U %S %M"]);
    timed.arg(cmd.get_program());
    timed.args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            timed.env(k, v);
        }
    }
    let out = timed.output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    let figures: Vec<f64> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let time: Vec<f64> = err
        .lines()
        .find_map(|l| l.strip_prefix("TIME "))?
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    match (&figures[..], &time[..]) {
        ([a, b, c, d], [wall, user, sys, rss]) => {
            Some([*a, *b, *c, *d, *wall, user + sys, rss / 1024.0])
        }
        _ => {
            eprintln!("child failed: {text} {err}");
            None
        }
    }
}

fn main() {
    let work = std::env::var_os("CGP_BENCH_WORK").map(PathBuf::from);
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = work.unwrap_or_else(|| tmp.path().to_path_buf());
    let tree = base.join("tree");
    let cache = base.join("cache-load");
    if std::env::var_os(CHILD).is_some() {
        child(&tree, &cache);
        return;
    }
    let rounds: usize = std::env::var("CGP_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    if !tree.exists() {
        let corpus = std::env::var_os("CGP_BENCH_CORPUS")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/registry/src"))
            })
            .expect("set CGP_BENCH_CORPUS");
        std::fs::create_dir_all(&tree).expect("mkdir");
        let (files, _) = copy_tree(&corpus, &tree);
        println!("copied {files} files from {}", corpus.display());
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at start: {}", load.trim());
    {
        let t = Instant::now();
        let (ws, source) = Workspace::open(&tree, options(&cache)).expect("open");
        ws.refresh().expect("refresh");
        let stats = ws.stats();
        println!(
            "this build: open ({source:?}) + first check {:.1} s, {} files, {} chunks, index {:.1} MB",
            t.elapsed().as_secs_f64(),
            stats.files,
            stats.chunks,
            stats.bytes_on_disk as f64 / 1e6
        );
    }
    let exe = std::env::current_exe().expect("exe");
    let baseline = std::env::var_os("CGP_BENCH_BASELINE").map(PathBuf::from);
    // The baseline's work directory: the same tree (a link), its own cache.
    let baseline_base = base.join("baseline");
    if baseline.is_some() {
        std::fs::create_dir_all(&baseline_base).expect("mkdir");
        let link = baseline_base.join("tree");
        if !link.exists() {
            std::os::unix::fs::symlink(&tree, &link).expect("link the tree");
        }
    }
    let new_cmd = || {
        let mut c = Command::new(&exe);
        c.env(CHILD, "1").env("CGP_BENCH_WORK", &base);
        c
    };
    let old_cmd = |exe: &Path| {
        let mut c = Command::new(exe);
        c.env(BASELINE_CHILD, "quick")
            .env("CGP_BENCH_WORK", &baseline_base);
        c
    };
    // One unmeasured run each: builds the baseline's cache, warms the page cache.
    let _ = run(&mut new_cmd());
    if let Some(old) = &baseline {
        let t = Instant::now();
        let _ = run(&mut old_cmd(old));
        println!(
            "baseline: first run (builds its cache) {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    let mut rows: [Vec<[f64; 7]>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..rounds {
        if let Some(r) = run(&mut new_cmd()) {
            rows[0].push(r);
        }
        if let Some(old) = &baseline {
            if let Some(r) = run(&mut old_cmd(old)) {
                rows[1].push(r);
            }
        }
    }
    let col = |i: usize, k: usize| median(rows[i].iter().map(|r| r[k]).collect());
    let labels = ["this build", "baseline"];
    for (i, label) in labels.iter().enumerate() {
        if rows[i].is_empty() {
            continue;
        }
        println!(
            "{label} ({} runs, medians): open (load) {:.1} ms, check {:.1} ms, query {:.1} ms, in-process total {:.1} ms | process wall {:.0} ms, CPU (user + sys) {:.0} ms, peak RSS {:.0} MiB",
            rows[i].len(),
            col(i, 0),
            col(i, 1),
            col(i, 2),
            col(i, 0) + col(i, 1) + col(i, 2),
            col(i, 4) * 1000.0,
            col(i, 5) * 1000.0,
            col(i, 6),
        );
    }
    if !rows[1].is_empty() && !rows[0].is_empty() {
        println!(
            "ratios baseline / this build: open {:.1}x, in-process total {:.1}x, process wall {:.1}x, CPU {:.1}x, peak RSS {:.1}x",
            col(1, 0) / col(0, 0),
            (col(1, 0) + col(1, 1) + col(1, 2)) / (col(0, 0) + col(0, 1) + col(0, 2)),
            col(1, 4) / col(0, 4),
            col(1, 5) / col(0, 5),
            col(1, 6) / col(0, 6),
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at end: {}", load.trim());
}
