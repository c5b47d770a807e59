//! Encoding cost with the shipped model: a one-line query, and a 50-line
//! chunk of code (the unit the workspace index embeds), against the cost of
//! tokenizing the same chunk alone (the floor: splitting and lowercasing,
//! no lookups or arithmetic).

use std::hint::black_box;

use contextgraph_embed::{builtin, tokenize::for_each_token};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// 50 lines of ordinary Rust: doc comments, identifiers, literals.
const CHUNK: &str = include_str!("../src/encode.rs");

fn fifty_lines() -> String {
    CHUNK
        .lines()
        .skip(60)
        .take(50)
        .collect::<Vec<_>>()
        .join("\n")
}

fn bench(c: &mut Criterion) {
    let model = builtin().expect("the built-in model loads");
    let chunk = fifty_lines();
    let mut out = vec![0.0f32; model.dim()];
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Bytes(chunk.len() as u64));
    group.bench_function("chunk_50_lines", |b| {
        b.iter(|| model.encode_into(black_box(&chunk), &mut out))
    });
    group.bench_function("tokenize_only_50_lines", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for_each_token(black_box(&chunk), |t| n += t.len());
            n
        })
    });
    group.finish();
    c.bench_function("encode/query", |b| {
        b.iter(|| {
            model.encode(black_box(
                "how is the token budget enforced when packing frames",
            ))
        })
    });
    c.bench_function("load/builtin_from_bytes", |b| {
        b.iter(|| {
            contextgraph_embed::StaticModel::from_bytes(
                black_box(contextgraph_embed::builtin::BUILTIN_MODEL_BYTES),
                "bench",
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
