//! What the semantic signal costs on a real tree: a cold index build, then
//! embedding every chunk, then scoring a few goals, each timed; then cold
//! opens with the signal off and on (vectors computed at open and written
//! to `vectors.bin`), alternated, and a warm open that loads the vectors
//! file instead of embedding, each a median of three.
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
    drop(view);
    drop(ws);
    opens(&dir);
}

/// Cold opens with the semantic signal off and on, alternated, then warm
/// opens with it on (the index and `vectors.bin` loaded): medians of three.
fn opens(dir: &str) {
    let open = |cache: &std::path::Path, semantic: bool| -> Option<f64> {
        let options = WorkspaceOptions {
            cache: CacheLocation::Base(cache.to_path_buf()),
            semantic,
            ..WorkspaceOptions::default()
        };
        let start = Instant::now();
        let opened = Workspace::open(dir, options).ok()?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        drop(opened);
        Some(ms)
    };
    let (mut off, mut on, mut warm) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let (Ok(a), Ok(b)) = (tempfile::tempdir(), tempfile::tempdir()) else {
            eprintln!("error: temporary cache");
            return;
        };
        off.extend(open(a.path(), false));
        on.extend(open(b.path(), true));
        warm.extend(open(b.path(), true));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (off, on, warm) = (median(&mut off), median(&mut on), median(&mut warm));
    println!(
        "cold open: semantic off {off:.0} ms, on {on:.0} ms ({:+.0}%); warm open with vectors.bin {warm:.0} ms",
        100.0 * (on - off) / off
    );
}
