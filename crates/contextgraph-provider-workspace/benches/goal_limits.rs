//! Bounded work per request (issue 26, N5): what a hostile goal costs the
//! workspace provider, and the goal's term handling before and after, in
//! one run.
//!
//! `cargo bench -p contextgraph-provider-workspace --bench goal_limits`
//!
//! Measured per case, median of several runs, on the calling thread:
//! CPU time (`/proc/thread-self/schedstat`, nanoseconds) and the growth of
//! the process's peak RSS over the run (`VmHWM` after resetting it through
//! `/proc/self/clear_refs`). Linux only. Cases:
//! 1. a 16 MiB goal of distinct words (the worst the 16 MiB line allows),
//!    asked of the provider in-process: answered `bad_request` by the
//!    limit; target ≤ 100 ms CPU and ≤ 32 MB RSS;
//! 2. the largest goal the limits admit (32 KiB, 512 distinct words),
//!    answered normally;
//! 3. distinct-term extraction of a 64,000-distinct-word goal with the old
//!    list scan (quadratic) and the new set (linear), side by side.

use std::time::Duration;

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::limits::{MAX_GOAL_BYTES, MAX_GOAL_TERMS};
use contextgraph_types::ContextQuery;

fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns = text
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    Duration::from_nanos(ns)
}

fn status_kib(key: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// CPU (the larger of the thread's CPU time and the wall time: the call
/// runs on this thread, and schedstat advances at scheduler ticks) and the
/// peak-RSS growth (MiB) of one call of `f`.
fn measure(f: impl FnOnce()) -> (Duration, f64) {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let rss_before = status_kib("VmRSS:");
    let cpu_before = thread_cpu();
    let wall = std::time::Instant::now();
    f();
    let wall = wall.elapsed();
    let cpu = thread_cpu().saturating_sub(cpu_before).max(wall);
    let peak = status_kib("VmHWM:");
    (cpu, peak.saturating_sub(rss_before) as f64 / 1024.0)
}

fn median<T: PartialOrd + Copy>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

fn report(label: &str, runs: Vec<(Duration, f64)>) -> (Duration, f64) {
    let cpu = median(runs.iter().map(|r| r.0).collect());
    let rss = median(runs.iter().map(|r| r.1).collect());
    println!(
        "{label:<58} cpu {:>10.3} ms   peak rss +{rss:>7.1} MiB   (median of {})",
        cpu.as_secs_f64() * 1e3,
        runs.len()
    );
    (cpu, rss)
}

/// `n` distinct words, space-separated.
fn distinct_words(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("term{i:x} "));
    }
    s
}

/// The old `distinct_tokens`: a scan of the list for every token.
fn distinct_old(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    contextgraph_search::tokenize::tokens(text, |t| {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    });
    out
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..300 {
        let p = dir.path().join(format!("d{}/m{i}.rs", i / 30));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(
            p,
            format!(
                "/// Retry the socket {i}.\npub fn retry_socket_{i}(n: u32) -> u32 {{ n + {i} }}\n"
            ),
        )
        .expect("write");
    }
    let cache = tempfile::tempdir().expect("temp dir");
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.path().to_path_buf()),
        ..WorkspaceOptions::default()
    };
    let (provider, _) = WorkspaceProvider::open(dir.path(), options).expect("open");

    // 1. The 16 MiB worst case: every word distinct.
    let mut huge = distinct_words(16 * 1024 * 1024 / 9);
    huge.truncate(16 * 1024 * 1024);
    let query = ContextQuery::new(huge, 20, 4000);
    let runs = (0..7)
        .map(|_| {
            measure(|| {
                let answer = provider.query(&query);
                assert!(answer.is_err(), "a 16 MiB goal must be refused");
            })
        })
        .collect();
    let (cpu, rss) = report("16 MiB goal, distinct words (refused by the limit)", runs);
    println!(
        "  target: <= 100 ms cpu, <= 32 MB rss: {}",
        if cpu <= Duration::from_millis(100) && rss <= 32.0 {
            "met"
        } else {
            "NOT met"
        }
    );
    drop(query);

    // 2. The largest admitted goal: MAX_GOAL_TERMS distinct words, padded
    //    to MAX_GOAL_BYTES by repeating them.
    let words = distinct_words(MAX_GOAL_TERMS - 1);
    let mut goal = String::new();
    while goal.len() + words.len() <= MAX_GOAL_BYTES {
        goal.push_str(&words);
    }
    let query = ContextQuery::new(goal, 20, 4000);
    let runs = (0..7)
        .map(|_| {
            measure(|| {
                provider
                    .query(&query)
                    .expect("an admitted goal is answered");
            })
        })
        .collect();
    report("32 KiB goal, 511 distinct words (admitted, answered)", runs);

    // 3. Term handling, old and new, on 64,000 distinct words (the
    //    tokenizer splits each into a few terms; both count the same).
    let text = distinct_words(64_000);
    let expected = contextgraph_search::tokenize::distinct_tokens(&text).len();
    let old = report(
        "distinct terms of 64,000 distinct words: old list scan",
        (0..3)
            .map(|_| measure(|| assert_eq!(distinct_old(&text).len(), expected)))
            .collect(),
    );
    let new = report(
        "distinct terms of 64,000 distinct words: new set",
        (0..7)
            .map(|_| {
                measure(|| {
                    assert_eq!(
                        contextgraph_search::tokenize::distinct_tokens(&text).len(),
                        expected
                    )
                })
            })
            .collect(),
    );
    println!(
        "  ratio old/new cpu: {:.0}x",
        old.0.as_secs_f64() / new.0.as_secs_f64().max(1e-9)
    );
}
