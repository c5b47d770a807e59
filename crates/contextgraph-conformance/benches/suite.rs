//! Performance target: a full strict run against a fast provider finishes
//! in well under 3 s, so the suite can run on every commit. Measures whole
//! runs (three provider processes each) against the misbehaving provider's
//! `normal` mode and the docs provider on a small Markdown folder.

#[path = "../tests/it/common.rs"]
mod common;

use contextgraph_conformance::{run_suite, SuiteOptions, Target};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

fn full_strict_runs(c: &mut Criterion) {
    let options = SuiteOptions::default().strict(true);
    let normal = Target::stdio(common::misbehaving_binary(), ["--mode", "normal"]);
    let folder = common::markdown_folder();
    let docs = Target::stdio(common::docs_binary(), [folder.path()]);
    for (target, name) in [(&normal, "misbehaving-normal"), (&docs, "docs")] {
        let report = run_suite(target, &options);
        assert!(report.passed(), "{name}: {}", report.render_text());
    }
    let mut group = c.benchmark_group("strict_run");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("misbehaving-normal", |b| {
        b.iter(|| run_suite(&normal, &options))
    });
    group.bench_function("docs", |b| b.iter(|| run_suite(&docs, &options)));
    group.finish();
}

criterion_group!(benches, full_strict_runs);
criterion_main!(benches);
