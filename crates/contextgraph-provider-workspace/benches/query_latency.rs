//! Criterion: query latency (exact identifier, prose, anchored) on a
//! generated 10 000-file workspace, built in memory and loaded from its
//! saved index (what every `cgp context` after the first queries), and one
//! incremental re-index.
//!
//! `cargo bench -p contextgraph-provider-workspace --bench query_latency`

use std::fmt::Write as _;

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::{CacheLocation, WorkspaceOptions, WorkspaceProvider};
use contextgraph_types::ContextQuery;
use criterion::{criterion_group, criterion_main, Criterion};

const WORDS: &[&str] = &[
    "buffer",
    "retry",
    "socket",
    "parse",
    "config",
    "token",
    "stream",
    "cache",
    "index",
    "query",
    "frame",
    "budget",
    "digest",
    "verify",
    "anchor",
    "window",
    "symbol",
    "graph",
    "walker",
    "ignore",
    "session",
    "handshake",
];

fn word(i: usize) -> &'static str {
    WORDS[i % WORDS.len()]
}

fn module(i: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "use crate::m{}::helper_{};\n",
        (i * 7) % 10_000,
        (i * 7) % 10_000
    );
    for f in 0..4 {
        let name = format!(
            "{}_{}_{}_{i}_{f}",
            word(i + f),
            word(i / 3 + f),
            word(i / 7)
        );
        let _ = writeln!(
            s,
            "/// {} the {} of a {} ({i}/{f}).",
            word(i + 2 * f),
            word(i / 5),
            word(f + 3)
        );
        let _ = writeln!(
            s,
            "pub fn {name}(x: u32) -> u32 {{\n    let y = helper_{}(x);",
            (i + f) % 10_000
        );
        for k in 0..6 {
            let _ = writeln!(
                s,
                "    let v{k} = y.wrapping_mul({k}) ^ {}; // {}",
                i * f + k,
                word(i + k)
            );
        }
        s.push_str("    y\n}\n\n");
    }
    let _ = writeln!(s, "pub fn helper_{i}(x: u32) -> u32 {{ x + {i} }}");
    s
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..10_000 {
        let p = dir.path().join(format!("d{}/m{i}.rs", i / 100));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, module(i)).expect("write");
    }
    let cache = tempfile::tempdir().expect("temp dir");
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache.path().to_path_buf()),
        ..WorkspaceOptions::default()
    };
    let (provider, _) = WorkspaceProvider::open(dir.path(), options.clone()).expect("open");
    let (loaded, source) = WorkspaceProvider::open(dir.path(), options).expect("reopen");
    assert_eq!(source, contextgraph_provider_workspace::IndexSource::Loaded);
    let anchor = contextgraph_provider_sdk::path_to_file_uri(&provider.root().join("d12/m1234.rs"))
        .expect("uri");
    for (group, provider) in [
        ("query_10k_files", &provider),
        ("query_10k_files_loaded", &loaded),
    ] {
        let mut g = c.benchmark_group(group);
        g.bench_function("identifier", |b| {
            let q = ContextQuery::new("retry_socket_parse_1234_0", 10, 8000);
            b.iter(|| provider.query(&q).expect("query"))
        });
        g.bench_function("prose", |b| {
            let q = ContextQuery::new("verify the digest of a window", 10, 8000);
            b.iter(|| provider.query(&q).expect("query"))
        });
        g.bench_function("anchored", |b| {
            let mut q = ContextQuery::new("budget stream", 10, 8000);
            q.anchors = vec![anchor.clone()];
            b.iter(|| provider.query(&q).expect("query"))
        });
        g.finish();
    }
    drop(loaded);
    // A long-running server's answers (issue 29), side by side: the
    // metadata scan of all 10,000 files before each answer (what servers
    // did before, and still do whenever the watcher is not trusted), and
    // the same server with its watcher trusted (the scan skipped).
    {
        use contextgraph_provider_workspace::serve::{keep_fresh, QUERY_FRESHNESS_DEADLINE};
        let scanning = provider
            .clone()
            .with_fresh_queries(QUERY_FRESHNESS_DEADLINE);
        let (watched, watch) = keep_fresh(provider.clone());
        assert!(watch.is_some(), "the watcher starts");
        watched.refresh().expect("refresh");
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while watched.workspace().scan_needed().is_some() {
            assert!(
                std::time::Instant::now() < until,
                "the watcher never became current"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let mut g = c.benchmark_group("served_query_10k_files");
        for (name, p) in [
            ("scan_before_each", &scanning),
            ("watcher_trusted", &watched),
        ] {
            g.bench_function(name, |b| {
                let q = ContextQuery::new("verify the digest of a window", 30, 8000);
                b.iter(|| p.query(&q).expect("query"))
            });
        }
        g.finish();
        assert!(
            watched.workspace().scan_needed().is_none(),
            "the trusted figures were measured with the scan skipped"
        );
        drop(watch);
    }
    let victim = dir.path().join("d50/m5000.rs");
    let mut n = 0u64;
    c.bench_function("incremental_reindex_one_file_of_10k", |b| {
        b.iter(|| {
            n += 1;
            std::fs::write(&victim, format!("{}\n// edit {n}\n", module(5000))).expect("edit");
            provider.refresh().expect("refresh")
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
