//! Open a workspace with a persistent cache, for profilers: the first run
//! builds the index into the cache, every later run only loads it.
//!
//! ```sh
//! cargo build --release -p contextgraph-provider-workspace --example open_profile
//! target/release/examples/open_profile DIR CACHE_BASE        # build (first time)
//! perf record -g target/release/examples/open_profile DIR CACHE_BASE   # load
//! ```
//!
//! Prints how the index was obtained, the time `open` took, and the time of
//! one query right after it. With a third argument `refresh`, it then
//! brings the index up to date (appending changed files to the journal,
//! which the next load replays) and prints what that took.

use std::time::Instant;

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::ContextQuery;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let (Some(root), Some(cache)) = (args.next(), args.next()) else {
        eprintln!("usage: open_profile DIR CACHE_BASE [refresh]");
        std::process::exit(2);
    };
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.into()),
        ..WorkspaceOptions::default()
    };
    let started = Instant::now();
    let (provider, source) = match WorkspaceProvider::open(&root, options) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("open_profile: {e}");
            std::process::exit(1);
        }
    };
    let refresh = args.next().is_some_and(|a| a == "refresh");
    let opened = started.elapsed();
    let started = Instant::now();
    let answer = provider.query(&ContextQuery::new("parse config file", 10, 8000));
    let queried = started.elapsed();
    println!(
        "{source:?}: open {:.0} ms, first query {:.1} ms ({} frames)",
        opened.as_secs_f64() * 1e3,
        queried.as_secs_f64() * 1e3,
        answer.map_or(0, |r| r.frames.len())
    );
    if refresh {
        let started = Instant::now();
        match provider.refresh() {
            Ok(report) => println!(
                "refresh {:.1} ms: {} changed, {} added, {} removed",
                started.elapsed().as_secs_f64() * 1e3,
                report.changed,
                report.added,
                report.removed
            ),
            Err(e) => eprintln!("open_profile: refresh: {e}"),
        }
    }
}
