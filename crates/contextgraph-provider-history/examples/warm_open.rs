//! Scratch timer: open plus first query on a stored index, in this process
//! (run it once per measurement: a fresh process, warm page cache).
use contextgraph_provider_history::{HistoryOptions, HistoryProvider};
use contextgraph_provider_sdk::Provider;
use contextgraph_search::CacheLocation;
use contextgraph_types::ContextQuery;
use std::time::Instant;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let t = Instant::now();
    let p = HistoryProvider::open(
        &a[1],
        HistoryOptions {
            cache: CacheLocation::Base(a[2].clone().into()),
            plain_goal_frames: u32::MAX,
            ..HistoryOptions::default()
        },
    )
    .expect("open");
    let opened = t.elapsed();
    let r = p
        .query(&ContextQuery::new(
            "fix the parser error handling",
            8,
            4_000,
        ))
        .expect("query");
    let total = t.elapsed();
    println!(
        "{} commits={} frames={} open={:.1}ms total={:.1}ms",
        a.get(3).map_or("", |s| s),
        p.commits(),
        r.frames.len(),
        opened.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e3
    );
}
