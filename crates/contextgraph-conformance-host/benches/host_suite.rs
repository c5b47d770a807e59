//! Performance target: a full strict `cgp inspect host` run (seventeen
//! checks, a dozen adversary processes, deliberate timeouts of a few
//! hundred milliseconds) finishes in well under 3 s.

use contextgraph_conformance_host::{run_host_suite, AdversaryCommand, HostSuiteOptions};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

fn full_strict_host_run(c: &mut Criterion) {
    let options = HostSuiteOptions::default()
        .strict(true)
        .with_adversary(AdversaryCommand::new(
            env!("CARGO_BIN_EXE_contextgraph-host-adversary"),
            Vec::<&str>::new(),
        ));
    let report = run_host_suite(&options);
    assert!(report.passed(), "{}", report.render_text());
    let mut group = c.benchmark_group("host_suite");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("strict_run", |b| b.iter(|| run_host_suite(&options)));
    group.finish();
}

criterion_group!(benches, full_strict_host_run);
criterion_main!(benches);
