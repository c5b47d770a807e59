//! What one request costs the provider itself, in process (no pipes): a
//! query over the built-in corpus (files re-read from disk, scored, packed)
//! and a verify of every frame it served. Hosts' timing tests run against
//! this provider, so its own cost should stay far below their deadlines.

use std::hint::black_box;

use contextgraph_fixture_misbehaving::{Corpus, Engine, Mode, PROVIDER_NAME};
use contextgraph_types::{ContextQuery, VerifyRequest};
use criterion::{criterion_group, criterion_main, Criterion};

fn requests(c: &mut Criterion) {
    let scratch = tempfile::tempdir().expect("scratch folder");
    let corpus = Corpus::builtin(scratch.path()).expect("built-in corpus");
    let engine = Engine::new(Mode::Normal, corpus, PROVIDER_NAME, "bench");
    let query = ContextQuery::new("retry policy max_attempts backoff", 5, 600);
    c.bench_function("answer/builtin_corpus", |b| {
        b.iter(|| engine.answer(black_box(&query)))
    });
    let roomy = ContextQuery::new("retry policy max_attempts backoff", 50, 100_000);
    let served = engine.answer(&roomy).expect("an answer");
    let request = VerifyRequest {
        frames: served
            .frames
            .iter()
            .map(|f| f.frame_id(PROVIDER_NAME))
            .collect(),
    };
    c.bench_function("verify/all_builtin_frames", |b| {
        b.iter(|| engine.verify(black_box(&request)))
    });
}

criterion_group!(benches, requests);
criterion_main!(benches);
