//! Runner throughput over in-memory pipes: pipelined queries with 64 in
//! flight against a correlated provider answering from memory, the
//! lock-step round trip, and the bare `Session` dispatch (no transport) as
//! the floor both are compared with.

use std::hint::black_box;
use std::io::Write;
use std::thread;

use contextgraph_codec::LineReader;
use contextgraph_provider_sdk::serve::memory::{pipe, PipeReader, PipeWriter};
use contextgraph_provider_sdk::{
    pack, serve, FrameBuilder, Provider, ProviderError, ServeOptions, Session,
};
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, DataFlow, FrameKind,
    ProviderInfo, QueryCapability,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const IN_FLIGHT: usize = 64;

/// Answers every query with the same five ~200-byte frames, packed.
struct InMemory {
    correlation: bool,
    frames: Vec<ContextFrame>,
}

impl InMemory {
    fn new(correlation: bool) -> Self {
        let frames = (0..5)
            .map(|i| {
                FrameBuilder::new(
                    format!("doc:{i}"),
                    FrameKind::Doc,
                    format!("Doc {i}"),
                    "lorem ipsum dolor sit amet ".repeat(8),
                )
                .score(0.9 - i as f32 / 10.0)
                .build()
            })
            .collect();
        InMemory {
            correlation,
            frames,
        }
    }
}

impl Provider for InMemory {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "bench".into(),
            version: "1".into(),
            data_flow: DataFlow {
                reads: true,
                ..DataFlow::default()
            },
        }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Doc],
            },
            correlation: self.correlation,
            ..Capabilities::default()
        }
    }
    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        Ok(pack(self.frames.clone(), query))
    }
}

fn query_line(i: usize) -> String {
    format!("{{\"type\":\"query\",\"id\":\"q{i}\",\"query\":{{\"goal\":\"find the retry policy\",\"max_frames\":5,\"max_tokens\":1000}}}}\n")
}

/// A served provider and the host's ends of its pipes, handshake done.
fn connect(correlation: bool, options: ServeOptions) -> (PipeWriter, LineReader<PipeReader>) {
    let (mut to_provider, provider_in) = pipe();
    let (provider_out, from_provider) = pipe();
    thread::spawn(move || {
        serve(
            InMemory::new(correlation),
            provider_in,
            provider_out,
            options,
        )
    });
    let mut replies = LineReader::new(from_provider);
    to_provider
        .write_all(b"{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}\n")
        .unwrap();
    replies.next_line().unwrap().unwrap();
    (to_provider, replies)
}

fn runner(c: &mut Criterion) {
    let mut group = c.benchmark_group("runner");

    let batch: String = (0..IN_FLIGHT).map(query_line).collect();
    group.throughput(Throughput::Elements(IN_FLIGHT as u64));
    // Default workers (the machine's parallelism, at least 4), then one
    // thread per in-flight request, to show what oversubscription costs.
    for (name, options) in [
        ("pipelined_64_in_flight", ServeOptions::default()),
        (
            "pipelined_64_in_flight_64_workers",
            ServeOptions::default().with_max_workers(IN_FLIGHT),
        ),
    ] {
        let (mut to_provider, mut replies) = connect(true, options);
        group.bench_function(name, |b| {
            b.iter(|| {
                to_provider.write_all(batch.as_bytes()).unwrap();
                for _ in 0..IN_FLIGHT {
                    black_box(replies.next_line().unwrap().unwrap());
                }
            })
        });
    }

    let (mut to_provider, mut replies) = connect(false, ServeOptions::default());
    let one = query_line(0);
    group.throughput(Throughput::Elements(1));
    group.bench_function("lock_step_round_trip", |b| {
        b.iter(|| {
            to_provider.write_all(one.as_bytes()).unwrap();
            black_box(replies.next_line().unwrap().unwrap());
        })
    });

    let session = Session::new(InMemory::new(true));
    session
        .handle_line(b"{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}");
    let line = query_line(0);
    let line = line.trim_end().as_bytes();
    group.bench_function("session_dispatch_only", |b| {
        b.iter(|| black_box(session.handle_line(black_box(line))))
    });
    group.finish();
}

criterion_group!(benches, runner);
criterion_main!(benches);
