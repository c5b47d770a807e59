//! Performance target of the provider conformance suite: a full strict run
//! against a fast provider finishes in well under 3 s, so the suite can run
//! on every commit. Measures whole runs (three provider processes each)
//! against this crate's binary on a small Markdown folder (the misbehaving
//! fixture's half is `contextgraph-fixture-misbehaving`'s `suite` bench).

use contextgraph_conformance::{run_suite, SuiteOptions, Target};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

#[allow(dead_code)] // the bench uses a subset of the helpers
#[path = "../tests/it/suite.rs"]
mod suite;

fn full_strict_runs(c: &mut Criterion) {
    let options = SuiteOptions::default().strict(true);
    let folder = suite::markdown_folder();
    let docs = Target::stdio(suite::docs_binary(), [folder.path()]);
    let report = run_suite(&docs, &options);
    assert!(report.passed(), "docs: {}", report.render_text());
    let mut group = c.benchmark_group("strict_run");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("docs", |b| b.iter(|| run_suite(&docs, &options)));
    group.finish();
}

criterion_group!(benches, full_strict_runs);
criterion_main!(benches);
