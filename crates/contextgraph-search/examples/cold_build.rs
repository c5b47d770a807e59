//! The cold index build on a real tree, as a process of its own so that its
//! peak RSS is the build's: walk, read, chunk, tokenize, index, write the
//! snapshot into a fresh temporary cache.
//!
//! ```text
//! cargo run --release -p contextgraph-search --example cold_build -- DIR [THREADS]
//! ```
//!
//! Prints one line: files, chunks, wall seconds, user and system CPU
//! seconds and peak RSS (from `/proc/self`, Linux only; 0 elsewhere).
//! Run it under `valgrind --tool=callgrind` for instruction counts that do
//! not depend on the machine's load.

use std::time::Instant;

use contextgraph_search::{CacheLocation, Workspace, WorkspaceOptions};

/// A field of `/proc/self/status` in KiB (`VmHWM`, `VmRSS`), 0 when absent.
fn status_kib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse().ok())
        .unwrap_or(0.0)
}

/// User and system CPU seconds of this process (`/proc/self/stat`).
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the
    // 12th and 13th of them (14th and 15th of the line), in clock ticks.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    // Linux's USER_HZ is 100 on every mainstream configuration.
    (
        ticks(11).unwrap_or(0.0) / 100.0,
        ticks(12).unwrap_or(0.0) / 100.0,
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: cold_build DIR [THREADS]")?;
    let threads: usize = args.next().map_or(Ok(0), |t| t.parse())?;
    let cache = tempfile::tempdir()?;
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.path().to_path_buf()),
        threads,
        ..WorkspaceOptions::default()
    };
    let started = Instant::now();
    let (ws, source) = Workspace::open(&dir, options)?;
    let wall = started.elapsed().as_secs_f64();
    let (user, sys) = cpu_seconds();
    let stats = ws.stats();
    println!(
        "cold build ({source:?}): {} files, {} chunks, wall {wall:.2} s, user {user:.2} s, sys {sys:.2} s, peak RSS {:.0} MiB, index {:.1} MB",
        stats.files,
        stats.chunks,
        status_kib("VmHWM:") / 1024.0,
        stats.bytes_on_disk as f64 / 1e6,
    );
    Ok(())
}
