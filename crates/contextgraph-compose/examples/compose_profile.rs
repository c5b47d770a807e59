//! Compose the benchmark workload once, for profilers whose counts are
//! repeatable (callgrind), where criterion's repetitions would only add noise:
//!
//! ```sh
//! cargo build --release -p contextgraph-compose --example compose_profile
//! valgrind --tool=callgrind --toggle-collect='contextgraph_compose::compose::compose_with*' \
//!     target/release/examples/compose_profile 10000 stable 1
//! ```
//!
//! Arguments: number of candidate frames (default 10000), `stable` or
//! `ranked` (default `stable`), threads for the per-frame passes (default:
//! automatic; pass 1 under callgrind, which only follows the calling thread
//! with `--toggle-collect`), and how many times to compose (default 1; a
//! sampling profiler such as `perf record` wants many, so that composing,
//! not generating the workload, fills the samples). With more than one, the
//! wall time of each composition (drop included, as in the bench) is
//! printed as min / p10 / median: on a shared, loaded machine the minimum is
//! the closest thing to a quiet-machine number.
//!
//! Under valgrind the CPU has no SHA extensions, so `sha2` runs its portable
//! code and SHA-256 dominates the instruction count (over 90% at 10k
//! frames) far more than it dominates native time (about a quarter, with
//! SHA-NI): read callgrind counts for the rest of the pipeline only.

#[path = "../benches/support/workload.rs"]
mod workload;

use contextgraph_compose::{compose, Budget, Options, Placement};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let placement = match args.next().as_deref() {
        Some("ranked") => Placement::Ranked,
        _ => Placement::Stable,
    };
    let threads: Option<usize> = args.next().and_then(|a| a.parse().ok());
    let repeat: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1).max(1);
    let outcomes = workload::candidates(n);
    let mut options = Options::new(Budget::model_tokens(8000)).with_placement(placement);
    if let Some(t) = threads {
        options = options.with_threads(t);
    }
    let mut walls = Vec::with_capacity(repeat);
    for _ in 1..repeat {
        let start = std::time::Instant::now();
        drop(compose(&outcomes, &options));
        walls.push(start.elapsed().as_secs_f64() * 1e3);
    }
    if !walls.is_empty() {
        walls.sort_by(f64::total_cmp);
        let at = |q: usize| walls[(walls.len() - 1) * q / 100];
        eprintln!(
            "{n} frames, {} runs, wall ms: min {:.2} p10 {:.2} median {:.2}",
            walls.len(),
            at(0),
            at(10),
            at(50)
        );
    }
    match compose(&outcomes, &options) {
        Ok(c) => println!(
            "{n} frames: {} prompt bytes, {} citations, {} audit entries",
            c.prompt.len(),
            c.citations.len(),
            c.audit.frames.len()
        ),
        Err(e) => {
            eprintln!("compose_profile: {e}");
            std::process::exit(1);
        }
    }
}
