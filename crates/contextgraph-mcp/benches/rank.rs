//! Cost of the bridge's ranking per query: choosing which of 1000 listed
//! resources to read (metadata pass), and scoring one 64 KiB resource.

use contextgraph_mcp::bridge::rank;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rmcp::model::Resource;

fn bench(c: &mut Criterion) {
    let terms = rank::terms("how does the client retry with exponential backoff after a timeout");
    let resources: Vec<Resource> = (0..1000)
        .map(|i| {
            Resource::new(
                format!("file:///repo/docs/note_{i}.md"),
                format!("note {i}"),
            )
            .with_description(if i % 7 == 0 {
                "retry and backoff policy"
            } else {
                "other topic"
            })
        })
        .collect();
    c.bench_function("pick_32_of_1000_resources", |b| {
        b.iter(|| rank::pick(black_box(&resources), &terms, &[], 32))
    });
    let content = "The client retries a request with exponential backoff; a timeout aborts it.\n"
        .repeat(64 * 1024 / 78);
    c.bench_function("content_score_64kib", |b| {
        b.iter(|| rank::content_score(black_box(&content), &terms))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
