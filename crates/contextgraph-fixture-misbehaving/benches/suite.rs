//! Performance target of the provider conformance suite: a full strict run
//! against a fast provider finishes in well under 3 s, so the suite can run
//! on every commit. Measures whole runs (three provider processes each)
//! against this fixture's `normal` mode (the docs provider's half of the
//! measurement is `contextgraph-provider-docs`'s `suite` bench).

use contextgraph_conformance::{run_suite, SuiteOptions, Target};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

fn full_strict_runs(c: &mut Criterion) {
    let options = SuiteOptions::default().strict(true);
    let normal = Target::stdio(
        env!("CARGO_BIN_EXE_contextgraph-misbehaving-provider"),
        ["--mode", "normal"],
    );
    let report = run_suite(&normal, &options);
    assert!(report.passed(), "{}", report.render_text());
    let mut group = c.benchmark_group("strict_run");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("misbehaving-normal", |b| {
        b.iter(|| run_suite(&normal, &options))
    });
    group.finish();
}

criterion_group!(benches, full_strict_runs);
criterion_main!(benches);
