//! What the semantic signal costs on a large tree, this build against a
//! baseline build, interleaved in one run: cold build, warm open + one
//! query (each run its own process under `/usr/bin/time`, for wall, CPU and
//! peak RSS), and the query latency of an opened workspace (p50 of many
//! goals), each with the signal on and off.
//!
//! ```text
//! cargo run --release -p contextgraph-search --example semantic_scale -- \
//!     CORPUS WORK [BASELINE_EXE]
//! ```
//!
//! `CORPUS` is copied once into `WORK/tree`; every (build, mode) keeps its
//! own cache under `WORK`. `BASELINE_EXE` is this example built from the
//! commit to compare against. Modes: `on` (signal on, no chunk limit) and
//! `off` (signal off: what a build whose chunk limit the tree exceeds
//! runs), or those given in `$CGP_SCALE_MODES` (comma-separated; `default`
//! is the build's default options). Rounds: `$CGP_SCALE_ROUNDS` (default
//! 5) warm and `$CGP_SCALE_COLD_ROUNDS` (default 3) cold.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use contextgraph_search::{CacheLocation, FileCache, SearchOptions, Workspace, WorkspaceOptions};

/// Goals of the query-latency measurement: prose, questions, identifiers.
const GOALS: &[&str] = &[
    "parse the configuration file",
    "how is the token budget enforced",
    "retry a failed request with backoff",
    "where are ignore rules applied when walking the tree",
    "serialize a struct to json",
    "open a tcp connection with a timeout",
    "HashMap",
    "how does the allocator grow its buffer",
    "compress data with deflate",
    "spawn a thread pool and join the workers",
    "read environment variables",
    "unicode normalization of strings",
    "parse command line arguments",
    "hash a password",
    "what happens when the channel is closed",
    "format a date as rfc3339",
];

fn options(cache: &Path, mode: &str) -> WorkspaceOptions {
    let mut o = WorkspaceOptions {
        cache: CacheLocation::Base(cache.to_path_buf()),
        ..WorkspaceOptions::default()
    };
    match mode {
        "on" => {
            o.semantic = true;
            o.semantic_max_chunks = usize::MAX;
        }
        "off" => o.semantic = false,
        _ => {}
    }
    o
}

/// One goal answered as the provider answers it: semantic scores, then
/// the ranked search that fuses them.
fn query(ws: &Workspace, goal: &str) -> usize {
    let semantic = ws.semantic_top(
        goal,
        contextgraph_search::semantic::SEMANTIC_SERVED,
        &|_| true,
    );
    let view = ws.view();
    let mut files = FileCache::default();
    view.search(
        goal,
        &SearchOptions {
            semantic: &semantic,
            ..SearchOptions::default()
        },
        &mut files,
    )
    .len()
}

/// Child: open (building when the cache is empty), then `what`:
/// `one` answers one goal and prints `open_ms query_ms`; `many` answers
/// every goal five times and prints `open_ms p50_ms p90_ms`.
fn child(mode: &str, tree: &Path, cache: &Path, what: &str) {
    let t = Instant::now();
    let (ws, _) = match Workspace::open(tree, options(cache, mode)) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("open: {e}");
            std::process::exit(1);
        }
    };
    let open = t.elapsed().as_secs_f64() * 1e3;
    if what == "one" {
        let t = Instant::now();
        let n = query(&ws, GOALS[0]);
        let q = t.elapsed().as_secs_f64() * 1e3;
        if n == 0 {
            eprintln!("no hits");
        }
        println!("{open:.1} {q:.2}");
        return;
    }
    // Warm-up: the first goal pays first-use decoding.
    query(&ws, GOALS[0]);
    let mut times = Vec::new();
    for _ in 0..5 {
        for goal in GOALS {
            let t = Instant::now();
            query(&ws, goal);
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    times.sort_by(f64::total_cmp);
    let p = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!("{open:.1} {:.2} {:.2}", p(0.5), p(0.9));
}

/// A child under `/usr/bin/time`: its printed figures, then wall s,
/// CPU s (user + system) and peak RSS MiB.
fn run(exe: &Path, args: &[&str]) -> Option<Vec<f64>> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "TIME %e %U %S %M"])
        .arg(exe)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    let mut figures: Vec<f64> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let time: Vec<f64> = err
        .lines()
        .find_map(|l| l.strip_prefix("TIME "))?
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if !out.status.success() || time.len() != 4 {
        eprintln!("child failed: {text} {err}");
        return None;
    }
    figures.extend([time[0], time[1] + time[2], time[3] / 1024.0]);
    Some(figures)
}

/// Per (build, mode), each run's figures.
type Runs<'a> = Vec<((&'a str, &'a str), Vec<Vec<f64>>)>;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") && args.len() == 6 {
        child(&args[2], Path::new(&args[3]), Path::new(&args[4]), &args[5]);
        return;
    }
    let (Some(corpus), Some(work)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: semantic_scale CORPUS WORK [BASELINE_EXE]");
        std::process::exit(2);
    };
    let work = PathBuf::from(work);
    let tree = work.join("tree");
    if !tree.exists() {
        let _ = std::fs::create_dir_all(&tree);
        let (files, _) = contextgraph_testkit::corpus::copy_tree(Path::new(corpus), &tree);
        println!("copied {files} files");
    }
    let rounds = |var: &str, default: usize| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let mut builds = vec![("new", std::env::current_exe().expect("exe"))];
    if let Some(b) = args.get(3) {
        builds.push(("base", PathBuf::from(b)));
    }
    let modes_var = std::env::var("CGP_SCALE_MODES").unwrap_or_else(|_| "on,off".into());
    let modes: Vec<&str> = modes_var.split(',').collect();
    let tree_s = tree.to_string_lossy().into_owned();
    let cache = |build: &str, mode: &str| work.join(format!("cache-{build}-{mode}"));
    println!(
        "load average at start: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    // Cold builds: open_ms, query_ms, wall s, CPU s, RSS MiB.
    let mut cold: Runs<'_> = Vec::new();
    for _ in 0..rounds("CGP_SCALE_COLD_ROUNDS", 3) {
        for (name, exe) in &builds {
            for &mode in &modes {
                let dir = cache(name, mode);
                let _ = std::fs::remove_dir_all(&dir);
                let d = dir.to_string_lossy().into_owned();
                if let Some(f) = run(exe, &["child", mode, &tree_s, &d, "one"]) {
                    match cold.iter_mut().find(|(k, _)| *k == (*name, mode)) {
                        Some((_, v)) => v.push(f),
                        None => cold.push(((name, mode), vec![f])),
                    }
                }
            }
        }
    }
    report("cold build + one query", &cold);
    let mut warm: Runs<'_> = Vec::new();
    let mut many: Runs<'_> = Vec::new();
    for _ in 0..rounds("CGP_SCALE_ROUNDS", 5) {
        for (name, exe) in &builds {
            for &mode in &modes {
                let d = cache(name, mode).to_string_lossy().into_owned();
                for (what, into) in [("one", &mut warm), ("many", &mut many)] {
                    if let Some(f) = run(exe, &["child", mode, &tree_s, &d, what]) {
                        match into.iter_mut().find(|(k, _)| *k == (*name, mode)) {
                            Some((_, v)) => v.push(f),
                            None => into.push(((name, mode), vec![f])),
                        }
                    }
                }
            }
        }
    }
    report("warm open + one query", &warm);
    report("warm open, then query p50 / p90 (ms)", &many);
}

/// Medians per (build, mode), and each figure's ratio to the baseline's.
fn report(title: &str, rows: &Runs<'_>) {
    println!("\n{title}: medians (figures: child's own, then wall s, CPU s, peak RSS MiB)");
    let medians = |runs: &[Vec<f64>]| -> Vec<f64> {
        let n = runs.iter().map(Vec::len).min().unwrap_or(0);
        (0..n)
            .map(|i| median(runs.iter().map(|r| r[i]).collect()))
            .collect()
    };
    for ((build, mode), runs) in rows {
        let m = medians(runs);
        let cells: Vec<String> = m.iter().map(|x| format!("{x:>9.2}")).collect();
        let ratio = rows
            .iter()
            .find(|((b, md), _)| *b == "base" && md == mode)
            .map(|(_, r)| medians(r))
            .filter(|_| *build == "new")
            .map(|b| {
                m.iter()
                    .zip(&b)
                    .map(|(x, y)| format!("{:>6.2}", x / y))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        println!(
            "{build:>4} {mode:>7} (n={}): {}   {}",
            runs.len(),
            cells.join(" "),
            if ratio.is_empty() {
                String::new()
            } else {
                format!("new/base: {ratio}")
            }
        );
    }
}
