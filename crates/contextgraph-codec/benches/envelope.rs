//! Decoding and encoding a 4 MiB `frames` line.
//!
//! The target: framing + decoding + validating costs at most 1.3× a
//! bare `serde_json::from_slice` of the same bytes into the same Rust types,
//! and encoding likewise. Three baselines are measured in the same run:
//! - `bare_from_slice`: `serde_json::from_slice::<Envelope>` (our one-pass visitor);
//! - `derived_tagged_enum`: the same bytes into a serde-derived
//!   internally-tagged enum (the obvious implementation, which buffers);
//! - `bare_to_vec`: `serde_json::to_vec` for encoding.

use std::io::Cursor;

use contextgraph_codec::{encode_envelope_into, Envelope, EnvelopeReader};
use contextgraph_types::*;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde::Deserialize;

/// The derived internally-tagged shape, for comparison only.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum DerivedEnvelope {
    Frames {
        id: Option<String>,
        result: ContextQueryResult,
    },
}

fn big_frames_line() -> (Vec<u8>, ContextQuery) {
    let mut frames = Vec::new();
    let mut line = Vec::new();
    let body: String =
        "fn retry_loop(attempts: u32) -> Result<(), Error> { /* backoff */ }\n".repeat(24);
    let mut i = 0;
    loop {
        let mut f = ContextFrame::new(
            format!("repo:src/file{i}.rs#L1-24"),
            FrameKind::Snippet,
            format!("src/file{i}.rs"),
            body.clone(),
        );
        f.score = 0.5;
        f.content_digest = Some(format!("sha256:{}", "ab".repeat(32)));
        f.uri = Some(format!("file:///repo/src/file{i}.rs"));
        f.citation_label = Some(format!("src/file{i}.rs L1-24"));
        f.recorded_at = Some("2026-07-20T18:00:00Z".into());
        f.provenance = vec![Provenance {
            kind: "file".into(),
            uri: f.uri.clone(),
            range: Some("L1-24".into()),
            digest: Some(format!("sha256:{}", "cd".repeat(32))),
            method: Some("tree-sitter".into()),
            by: Some("repo".into()),
        }];
        frames.push(f);
        i += 1;
        if i % 64 == 0 {
            line.clear();
            let env = Envelope::Frames {
                id: Some("q1".into()),
                result: ContextQueryResult {
                    frames: frames.clone(),
                    truncated: false,
                    dropped_estimate: None,
                },
            };
            encode_envelope_into(&env, &mut line).unwrap();
            if line.len() >= 4 << 20 {
                break;
            }
        }
    }
    let query = ContextQuery::new("g", u32::MAX, u32::MAX);
    (line, query)
}

fn bench(c: &mut Criterion) {
    let (line, query) = big_frames_line();
    let payload = &line[..line.len() - 1];
    let mut g = c.benchmark_group("frames_4mib");
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.sample_size(30);
    g.bench_function("bare_from_slice", |b| {
        b.iter(|| serde_json::from_slice::<Envelope>(black_box(payload)).unwrap())
    });
    g.bench_function("derived_tagged_enum", |b| {
        b.iter(|| serde_json::from_slice::<DerivedEnvelope>(black_box(payload)).unwrap())
    });
    g.bench_function(
        BenchmarkId::new("frame_decode_validate", "EnvelopeReader"),
        |b| {
            b.iter(|| {
                let mut reader = EnvelopeReader::new(Cursor::new(black_box(&line)));
                let Some(Ok(Envelope::Frames { result, .. })) = reader.next_envelope() else {
                    panic!("frames")
                };
                assert!(result.validate(&query).is_empty());
                result
            })
        },
    );
    let env = serde_json::from_slice::<Envelope>(payload).unwrap();
    g.bench_function("bare_to_vec", |b| {
        b.iter(|| serde_json::to_vec(black_box(&env)).unwrap())
    });
    let mut out = Vec::new();
    g.bench_function("encode_envelope_into", |b| {
        b.iter(|| {
            out.clear();
            encode_envelope_into(black_box(&env), &mut out).unwrap();
            out.len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
