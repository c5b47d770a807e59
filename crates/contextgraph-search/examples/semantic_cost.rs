//! What the semantic signal costs on a real tree: a cold index build, then
//! embedding every chunk, then scoring a few goals, each timed.
//!
//! ```text
//! cargo run --release -p contextgraph-search --example semantic_cost -- DIR
//! ```

use std::time::Instant;

use contextgraph_search::semantic::SemanticIndex;
use contextgraph_search::{CacheLocation, Workspace, WorkspaceOptions};

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".to_string());
    let cache = match tempfile::tempdir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: temporary cache: {e}");
            std::process::exit(1);
        }
    };
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.path().to_path_buf()),
        ..WorkspaceOptions::default()
    };
    let start = Instant::now();
    let (ws, _) = match Workspace::open(&dir, options) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let build = start.elapsed();
    let model = match contextgraph_embed::builtin() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let start = Instant::now();
    let mut semantic = SemanticIndex::new(model);
    let report = semantic.update(&ws, model);
    let embed = start.elapsed();
    let stats = ws.stats();
    println!(
        "{} files, {} chunks: cold index build {:.0} ms, embedding {:.0} ms ({:?}), +{:.0}%",
        stats.files,
        stats.chunks,
        build.as_secs_f64() * 1e3,
        embed.as_secs_f64() * 1e3,
        report,
        100.0 * embed.as_secs_f64() / build.as_secs_f64()
    );
    let view = ws.view();
    let mut times = Vec::new();
    for goal in [
        "how is the token budget enforced",
        "retry a failed request with backoff",
        "where are ignore rules applied when walking the tree",
        "parse the snapshot file",
    ] {
        let start = Instant::now();
        let scores = semantic.semantic_scores(&view, model, goal);
        times.push(start.elapsed().as_secs_f64() * 1e3);
        if let Ok(scores) = scores {
            let top: Vec<String> = scores
                .iter()
                .take(3)
                .filter_map(|&(slot, s)| {
                    view.chunk(slot)
                        .map(|(p, c)| format!("{p}:{} {s:.2}", c.start_line))
                })
                .collect();
            println!("{goal}: {}", top.join(", "));
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "scoring all chunks per goal: median {:.2} ms",
        times[times.len() / 2]
    );
}
