//! A cold build on a large corpus against its floor, this build against a
//! baseline build, interleaved in one run, with a per-phase timeline.
//!
//! ```text
//! cargo bench -p contextgraph-search --bench cold_build -- \
//!     --tree target/corpus-6k [--tree target/corpus-16k] \
//!     [--baseline OLD_COLD_BUILD_BINARY] [--rounds 5] [--work DIR]
//! cargo bench -p contextgraph-search --bench cold_build -- \
//!     --make-corpus 6000 target/corpus-6k
//! ```
//!
//! Each run is its own process under `/usr/bin/time` (wall, user + system
//! CPU, peak RSS), with the page cache warm (one unmeasured run of each
//! first) and an empty index cache:
//!
//! - **floor**: the walk, then every admitted file read and, when a
//!   grammar claims it, parsed by tree-sitter, on as many threads as the
//!   build uses. Nothing a build can skip on a cold run: the ratio of a
//!   build to it is what the build adds (chunking, tokenising, the index,
//!   embedding, saving).
//! - **floor, distinct contents**: the same, but a content (language and
//!   bytes) already parsed in the run is not parsed again. A build chunks
//!   a file whose bytes, language and module path an earlier file had
//!   only once (`src/same_content.rs`), so it skips some of what the floor
//!   parses; this floor skips at least that much (a byte-identical file
//!   under another module path is still chunked by the build).
//! - **this build** / **baseline**: `Workspace::open` on an empty cache
//!   (walk, read, parse, chunk, index, save the snapshot, embed every
//!   chunk, save the vectors) and one query, as a cold `cgp context` does.
//!   The clock is fixed, so two builds of the same tree save the same
//!   bytes when they index the same way: after the rounds the two caches
//!   are compared file by file and any difference is printed.
//!
//! The baseline is this file's binary built against the revision to
//! compare with (only `Workspace`, `IndexBuild`, `walk` and `Language` are
//! used, so it builds there unchanged); without `--baseline` only this
//! build and the floor are measured. The timeline (`support/timeline.rs`)
//! of each variant's median run is printed: wall, CPU, runnable threads and
//! the longest stretch with fewer runnable threads than cores, per phase.
//!
//! `--make-corpus FILES DEST` copies whole crates of `$CGP_BENCH_CORPUS`
//! (default: the one source directory under `~/.cargo/registry/src`), in
//! name order, until the walk admits at least FILES files of the copy;
//! the README of this crate says which corpora the figures are from.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use contextgraph_search::walk::{content_gate, walk};
use contextgraph_search::{
    BuildStep, CacheLocation, FileCache, IndexBuild, Language, SearchOptions, WalkOptions,
    Workspace, WorkspaceOptions,
};
use contextgraph_types::Timestamp;

#[path = "support/corpus.rs"]
#[allow(dead_code, unused_imports)]
mod corpus;
#[path = "support/timeline.rs"]
mod timeline;

use corpus::{copy_tree, median};
use timeline::Timeline;

/// Child switch: `floor`, `floor-distinct` or `build`.
const CHILD: &str = "CGP_COLD_CHILD";
const TREE: &str = "CGP_COLD_TREE";
const CACHE: &str = "CGP_COLD_CACHE";

/// Sampling period of the timeline.
const EVERY: Duration = Duration::from_millis(10);

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Child: the floor (walk, read, parse), with its timeline; with
/// `distinct`, each content (language, bytes) parsed once.
fn floor_child(tree: &Path, distinct: bool) {
    let phase = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&phase);
    let timeline = Timeline::start(EVERY, move || match seen.load(Ordering::Acquire) {
        0 => "walk",
        1 => "read+parse",
        _ => "end",
    });
    let walked = walk(tree, &WalkOptions::default());
    phase.store(1, Ordering::Release);
    let next = AtomicUsize::new(0);
    let parsed = AtomicUsize::new(0);
    let seen = std::sync::Mutex::new(std::collections::HashSet::<(Language, u64)>::new());
    std::thread::scope(|scope| {
        for _ in 0..cores() {
            scope.spawn(|| {
                let mut parser = tree_sitter::Parser::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = walked.files.get(i) else {
                        break;
                    };
                    let Ok(bytes) = std::fs::read(&file.abs_path) else {
                        continue;
                    };
                    let Ok(text) = content_gate(&bytes) else {
                        continue;
                    };
                    let language = Language::detect(&file.rel_path);
                    let Some(grammar) = language.grammar() else {
                        continue;
                    };
                    if distinct {
                        let hash = {
                            use std::hash::BuildHasher;
                            foldhash::quality::FixedState::with_seed(0).hash_one(text)
                        };
                        let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                        if !seen.insert((language, hash)) {
                            continue;
                        }
                    }
                    if parser.set_language(&grammar).is_ok() && parser.parse(text, None).is_some() {
                        parsed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    phase.store(2, Ordering::Release);
    for line in timeline.finish(cores()) {
        println!("{line}");
    }
    println!(
        "FIG files={} parsed={}",
        walked.files.len(),
        parsed.load(Ordering::Relaxed)
    );
}

/// Child: a cold build into an empty cache and one query, with its timeline.
fn build_child(tree: &Path, cache: &Path) {
    let _ = std::fs::remove_dir_all(cache);
    let build = IndexBuild::new();
    let opened = Arc::new(AtomicUsize::new(0));
    let (b, o) = (build.clone(), Arc::clone(&opened));
    let timeline = Timeline::start(EVERY, move || {
        if o.load(Ordering::Acquire) > 0 {
            return "query";
        }
        let s = b.snapshot();
        match s.step {
            BuildStep::Saving => "save",
            BuildStep::Embedding => "embed",
            _ if s.walking => "walk",
            _ if s.files_total == 0 => "start",
            _ if s.files_done < s.files_total => "read+parse",
            _ => "assemble",
        }
    });
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.to_path_buf()),
        build: Some(build),
        // Fixed: two builds of one tree then save the same bytes.
        clock: Arc::new(|| Timestamp::from_system_time(UNIX_EPOCH + Duration::from_secs(1 << 30))),
        ..WorkspaceOptions::default()
    };
    let t = Instant::now();
    let (ws, _) = Workspace::open(tree, options).expect("open");
    let open = t.elapsed();
    opened.store(1, Ordering::Release);
    let view = ws.view();
    let mut files = FileCache::default();
    let hits = view.search(
        "parse the configuration file",
        &SearchOptions::default(),
        &mut files,
    );
    drop(view);
    for line in timeline.finish(cores()) {
        println!("{line}");
    }
    let stats = ws.stats();
    println!(
        "FIG files={} chunks={} open_ms={:.0} hits={} index_mb={:.1}",
        stats.files,
        stats.chunks,
        open.as_secs_f64() * 1000.0,
        hits.len(),
        stats.bytes_on_disk as f64 / 1e6
    );
}

/// One measured child: (wall s, CPU s, peak RSS MiB, its stdout).
fn run(exe: &Path, child: &str, tree: &Path, cache: &Path) -> Option<(f64, f64, f64, String)> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "TIME %e %U %S %M"])
        .arg(exe)
        .env(CHILD, child)
        .env(TREE, tree)
        .env(CACHE, cache)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    let time: Vec<f64> = err
        .lines()
        .find_map(|l| l.strip_prefix("TIME "))?
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    match (&time[..], out.status.success()) {
        ([wall, user, sys, rss], true) => Some((*wall, user + sys, rss / 1024.0, text)),
        _ => {
            eprintln!("{child} child failed: {text} {err}");
            None
        }
    }
}

/// Every file under `dir` (relative path, bytes), in path order, but the
/// saved tree (`tree.bin`): its stamps hold the time of the scan, not the
/// fixed clock, and it is freshness metadata, not the index.
fn files_of(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "tree.bin") {
                continue;
            } else if let Ok(bytes) = std::fs::read(&p) {
                let rel = p.strip_prefix(dir).unwrap_or(&p).to_path_buf();
                out.push((rel, bytes));
            }
        }
    }
    out.sort();
    out
}

/// Compares two caches file by file; prints the verdict.
fn compare_caches(new: &Path, old: &Path) {
    let (a, b) = (files_of(new), files_of(old));
    let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    if names(&a) != names(&b) {
        println!(
            "saved caches DIFFER in their files: {:?} vs {:?}",
            names(&a),
            names(&b)
        );
        return;
    }
    let mut same = true;
    for ((p, x), (_, y)) in a.iter().zip(&b) {
        if x != y {
            same = false;
            println!(
                "saved file DIFFERS: {} ({} vs {} bytes)",
                p.display(),
                x.len(),
                y.len()
            );
        }
    }
    if same {
        let bytes: usize = a.iter().map(|(_, x)| x.len()).sum();
        println!(
            "saved caches byte-identical: {} files, {bytes} bytes ({})",
            a.len(),
            names(&a)
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// Copies crates of the registry source in name order until the walk
/// admits at least `want` files of `dest`.
fn make_corpus(want: usize, dest: &Path) {
    let source = std::env::var_os("CGP_BENCH_CORPUS")
        .map(PathBuf::from)
        .or_else(|| {
            let src = PathBuf::from(std::env::var_os("HOME")?).join(".cargo/registry/src");
            let mut dirs: Vec<PathBuf> = std::fs::read_dir(src)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .collect();
            dirs.sort();
            dirs.into_iter().next()
        })
        .expect("set CGP_BENCH_CORPUS");
    let mut crates: Vec<PathBuf> = std::fs::read_dir(&source)
        .expect("read the corpus source")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    let _ = std::fs::remove_dir_all(dest);
    let mut admitted = 0;
    let mut copied = 0;
    for c in crates {
        if admitted >= want {
            break;
        }
        let name = c.file_name().unwrap_or_default();
        let to = dest.join(name);
        copy_tree(&c, &to);
        copied += 1;
        admitted += walk(&to, &WalkOptions::default()).files.len();
    }
    let total = walk(dest, &WalkOptions::default()).files.len();
    println!(
        "{}: {copied} crates of {}, {total} files admitted by the walk",
        dest.display(),
        source.display()
    );
}

struct Args {
    trees: Vec<PathBuf>,
    baseline: Option<PathBuf>,
    rounds: usize,
    work: Option<PathBuf>,
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut args = Args {
        trees: Vec::new(),
        baseline: None,
        rounds: 5,
        work: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--bench" => {}
            "--list" => return Ok(None),
            "--tree" => args.trees.push(PathBuf::from(value("--tree")?)),
            "--baseline" => args.baseline = Some(PathBuf::from(value("--baseline")?)),
            "--work" => args.work = Some(PathBuf::from(value("--work")?)),
            "--rounds" => {
                args.rounds = value("--rounds")?
                    .parse()
                    .map_err(|e| format!("--rounds: {e}"))?
            }
            "--make-corpus" => {
                let want: usize = value("--make-corpus")?
                    .parse()
                    .map_err(|e| format!("--make-corpus: {e}"))?;
                make_corpus(want, Path::new(&value("--make-corpus")?));
                return Ok(None);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Some(args))
}

fn main() {
    if let Some(child) = std::env::var_os(CHILD) {
        let tree = PathBuf::from(std::env::var_os(TREE).expect("tree"));
        match child.to_str() {
            Some("floor") => floor_child(&tree, false),
            Some("floor-distinct") => floor_child(&tree, true),
            _ => build_child(&tree, Path::new(&std::env::var_os(CACHE).expect("cache"))),
        }
        return;
    }
    let args = match parse_args() {
        Ok(Some(args)) => args,
        Ok(None) => return,
        Err(e) => {
            eprintln!("cold_build: {e}");
            std::process::exit(2);
        }
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = args
        .work
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let exe = std::env::current_exe().expect("exe");
    for tree in &args.trees {
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!(
            "== {} (load average at start: {})",
            tree.display(),
            load.trim()
        );
        let mut variants: Vec<(&str, PathBuf, &str)> = vec![
            ("floor", exe.clone(), "floor"),
            ("this build", exe.clone(), "build"),
            ("floor, distinct contents", exe.clone(), "floor-distinct"),
        ];
        if let Some(old) = &args.baseline {
            variants.push(("baseline", old.clone(), "build"));
        }
        let cache = |i: usize| work.join(format!("cache-{i}"));
        // Unmeasured: the page cache holds the tree afterwards.
        for (i, (_, exe, child)) in variants.iter().enumerate() {
            let _ = run(exe, child, tree, &cache(i));
        }
        let mut results: Vec<Vec<(f64, f64, f64, String)>> = vec![Vec::new(); variants.len()];
        for round in 0..args.rounds {
            // Rotated order: no variant always follows the same one.
            for k in 0..variants.len() {
                let i = (round + k) % variants.len();
                let (_, exe, child) = &variants[i];
                if let Some(r) = run(exe, child, tree, &cache(i)) {
                    results[i].push(r);
                }
            }
        }
        let floor = median(results[0].iter().map(|r| r.0).collect());
        let distinct_floor = median(results[2].iter().map(|r| r.0).collect());
        let floor_cpu = median(results[0].iter().map(|r| r.1).collect());
        for (i, (label, _, _)) in variants.iter().enumerate() {
            let rows = &results[i];
            if rows.is_empty() {
                continue;
            }
            let wall = median(rows.iter().map(|r| r.0).collect());
            // The run whose wall is the median's: its timeline is printed.
            let shown = rows
                .iter()
                .min_by(|a, b| (a.0 - wall).abs().total_cmp(&(b.0 - wall).abs()));
            println!(
                "{label}: {} runs, medians: wall {wall:.2} s ({:.2}x the floor, {:.2}x the distinct floor), CPU {:.2} s ({:.2}x the floor's), peak RSS {:.0} MiB; walls {:?}",
                rows.len(),
                wall / floor,
                wall / distinct_floor,
                median(rows.iter().map(|r| r.1).collect()),
                median(rows.iter().map(|r| r.1).collect()) / floor_cpu,
                median(rows.iter().map(|r| r.2).collect()),
                rows.iter().map(|r| r.0).collect::<Vec<_>>()
            );
            // Each round's wall over the floor's of the same round: on a
            // shared machine the load drifts between rounds more than
            // within one (the variants of a round run back to back).
            let per_round = |base: &[(f64, f64, f64, String)]| {
                let ratios: Vec<f64> = rows.iter().zip(base).map(|(r, f)| r.0 / f.0).collect();
                (median(ratios.clone()), ratios)
            };
            if rows.len() == results[0].len() && rows.len() == results[2].len() {
                let (m, all) = per_round(&results[0]);
                let (d, _) = per_round(&results[2]);
                println!(
                    "  per round, wall over the floor's: median {m:.2}x (distinct floor {d:.2}x); {:?}",
                    all.iter().map(|x| (x * 100.0).round() / 100.0).collect::<Vec<_>>()
                );
            }
            if let Some((_, _, _, out)) = shown {
                for line in out.lines() {
                    println!("  {line}");
                }
            }
        }
        if args.baseline.is_some() {
            compare_caches(&cache(1), &cache(3));
        }
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!("load average at end: {}", load.trim());
    }
}
