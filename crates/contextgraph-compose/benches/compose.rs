//! Composition and fencing speed.
//!
//! - `compose/{stable,ranked}/N`: N candidate frames of 1–2 KB from 8
//!   providers, 20% duplicated content, 10% overlapping file ranges, composed
//!   into an 8,000-model-token prompt. Linear in N is the claim (1k / 10k / 100k).
//! - `fence/*`: rendering one block of 2 MB of content (choosing the
//!   boundary token over it and quoting it), CJK markup dense with `<` and
//!   multi-byte characters, and plain source code.

use contextgraph_compose::{compose, render_prompt, Budget, FenceAttributes, Options, Placement};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

#[path = "support/workload.rs"]
mod workload;

use workload::candidates;

fn bench_compose(c: &mut Criterion) {
    let mut group = c.benchmark_group("compose");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .warm_up_time(Duration::from_secs(2));
    for n in [1_000usize, 10_000, 100_000] {
        let outcomes = candidates(n);
        group.throughput(Throughput::Elements(n as u64));
        for (name, placement) in [("stable", Placement::Stable), ("ranked", Placement::Ranked)] {
            if placement == Placement::Ranked && n != 10_000 {
                continue;
            }
            let options = Options::new(Budget::model_tokens(8000)).with_placement(placement);
            group.bench_with_input(BenchmarkId::new(name, n), &outcomes, |b, outcomes| {
                b.iter(|| compose(black_box(outcomes), &options).map(|c| c.prompt.len()))
            });
        }
    }
    group.finish();
}

fn cjk_markup(bytes: usize) -> String {
    let unit = "<p class=\"note\">日本語のテキストと中文内容、한국어 &amp; ＜全角＞</p>\n<li>項目 &lt;1&gt; 〈注〉</li>\n";
    unit.repeat(bytes / unit.len() + 1)
}

fn source_code(bytes: usize) -> String {
    let unit = "pub fn retry<T, E>(policy: &RetryPolicy, mut op: impl FnMut() -> Result<T, E>) -> Result<T, E> {\n    let mut delay = policy.backoff_ms;\n    for attempt in 0..policy.max_attempts {\n        match op() {\n            Ok(v) => return Ok(v),\n            Err(e) if attempt + 1 == policy.max_attempts => return Err(e),\n            Err(_) => { sleep(delay); delay *= 2; }\n        }\n    }\n    unreachable!()\n}\n";
    unit.repeat(bytes / unit.len() + 1)
}

fn bench_fence(c: &mut Criterion) {
    let mut group = c.benchmark_group("fence");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    for (name, content) in [
        ("cjk_markup_2mb", cjk_markup(2 << 20)),
        ("source_code_2mb", source_code(2 << 20)),
    ] {
        group.throughput(Throughput::Bytes(content.len() as u64));
        let attributes = FenceAttributes {
            provider: "bench",
            label: "big L1-99999",
            title: "",
        };
        group.bench_function(name, |b| {
            b.iter(|| render_prompt([(attributes, black_box(content.as_str()))]).len())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_compose, bench_fence);
criterion_main!(benches);
