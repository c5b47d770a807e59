//! Issue 16's revalidation target: `verify` of the frames a session holds
//! (50, over this repository's sources) before and after identities were
//! grouped by file and unchanged files answered from the index's digests.
//!
//! `cargo bench -p contextgraph-provider-workspace --bench verify --features bench-internals`
//!
//! Three figures, each the median of alternating runs in one process:
//! - per identity (before): every identity re-reads and re-chunks its file;
//! - by file, read: each file read once and hashed (stamps not settled yet:
//!   just written), answered from the index since it holds those bytes;
//! - by file, proven: files whose settled stamps are unchanged since the
//!   refresh that read them answered from the index without a read.
//!
//! Every run's verdicts are compared with the per-identity answer: the
//! benchmark exits non-zero if they ever differ.

use std::path::Path;
use std::time::{Duration, Instant};

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_testkit::corpus::copy_rust_sources;
use contextgraph_types::{ContextQuery, FrameId, VerifyRequest, VerifyResponse};

/// Held frames, as in the target.
const HELD: usize = 50;

/// Alternating runs per figure.
const RUNS: usize = 21;

/// Goals whose frames make up the held set (overlapping, as a session's).
const GOALS: [&str; 6] = [
    "how does the host revalidate held frames with verify",
    "frame cache insert and eviction reasons",
    "verify request and verdict types",
    "how does compose fence frame content with a boundary token",
    "consent store grant and revoke records",
    "budget packing of frames by token cost",
];

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Time `old` and `new` alternately; medians, and whether every answer agreed.
fn side_by_side(
    p: &WorkspaceProvider,
    request: &VerifyRequest,
    new_label: &str,
    failures: &mut Vec<String>,
) -> (Duration, Duration) {
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let t = Instant::now();
        let a: VerifyResponse = p.verify_per_identity(request);
        old.push(t.elapsed());
        let t = Instant::now();
        let b = p.verify(request);
        new.push(t.elapsed());
        if a != b {
            failures.push(format!(
                "{new_label}: verdicts differ from per-identity verify"
            ));
        }
    }
    (median(old), median(new))
}

fn main() {
    let repo = std::env::var_os("CGP_BENCH_REPO")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("repo");
    copy_rust_sources(&repo, &ws);
    let cache = tempfile::tempdir().expect("cache");
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.path().to_path_buf()),
        progress: false,
        ..WorkspaceOptions::default()
    };
    let (p, _) = WorkspaceProvider::open(&ws, options).expect("open");
    let mut held: Vec<FrameId> = Vec::new();
    for goal in GOALS {
        let answer = p.query(&ContextQuery::new(goal, 12, 6000)).expect("query");
        for f in &answer.frames {
            let id = f.frame_id(contextgraph_provider_workspace::PROVIDER_NAME);
            if held.len() < HELD && !held.contains(&id) {
                held.push(id);
            }
        }
    }
    let mut files: Vec<&str> = held
        .iter()
        .filter_map(|id| id.frame_id.split_once('#').map(|(f, _)| f))
        .collect();
    files.sort_unstable();
    files.dedup();
    println!("{} held frames in {} files", held.len(), files.len());
    let request = VerifyRequest {
        frames: held.clone(),
    };
    let mut failures = Vec::new();

    // Just copied: no stamp is settled, every file is read.
    let reads = p.verify_file_reads();
    let _ = p.verify(&request);
    let read_once = p.verify_file_reads() - reads;
    let (old, read) = side_by_side(&p, &request, "by file, read", &mut failures);
    println!(
        "per identity {:.2} ms; by file, read and hashed ({read_once} file reads per call) {:.2} ms: {:.1}x",
        ms(old),
        ms(read),
        old.as_secs_f64() / read.as_secs_f64()
    );

    // Past the racy window a refresh settles the stamps: unchanged files are
    // answered from the index.
    std::thread::sleep(Duration::from_millis(2_100));
    p.refresh().expect("refresh");
    let reads = p.verify_file_reads();
    let _ = p.verify(&request);
    let proven_reads = p.verify_file_reads() - reads;
    let (old, proven) = side_by_side(&p, &request, "by file, proven", &mut failures);
    println!(
        "per identity {:.2} ms; by file, proven ({proven_reads} file reads per call) {:.3} ms: {:.0}x (target <= 5 ms)",
        ms(old),
        ms(proven),
        old.as_secs_f64() / proven.as_secs_f64()
    );
    if proven > Duration::from_millis(5) {
        failures.push(format!(
            "verify of {} held frames: {:.2} ms",
            held.len(),
            ms(proven)
        ));
    }
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("FAILED: {f}");
        }
        std::process::exit(1);
    }
}
