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
//! with `--toggle-collect`).

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
    let outcomes = workload::candidates(n);
    let mut options = Options::new(Budget::model_tokens(8000)).with_placement(placement);
    if let Some(t) = threads {
        options = options.with_threads(t);
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
