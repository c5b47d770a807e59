//! Throughput of NDJSON framing from an in-memory reader, against a bare
//! `memchr` scan of the same bytes (the floor: finding the newlines and
//! nothing else).

use std::hint::black_box;

use contextgraph_codec::LineReader;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// One 4 MiB envelope-shaped line.
fn one_big_line() -> Vec<u8> {
    let mut line = b"{\"type\":\"frames\",\"result\":{\"frames\":[{\"content\":\"".to_vec();
    line.resize(4 * 1024 * 1024 - 4, b'x');
    line.extend_from_slice(b"\"}]}");
    line.push(b'\n');
    line
}

/// Eight 4 MiB lines: after the first, the reader's buffer is warm, so this
/// shows the steady-state cost without the first line's allocation.
fn eight_big_lines() -> Vec<u8> {
    one_big_line().repeat(8)
}

/// 10,000 small envelopes, one per line.
fn many_small_lines() -> Vec<u8> {
    (0..10_000)
        .map(|i| format!("{{\"type\":\"query\",\"id\":\"q{i}\",\"query\":{{\"goal\":\"find retry policy\",\"max_frames\":5,\"max_tokens\":800}}}}\n"))
        .collect::<String>()
        .into_bytes()
}

/// Frames all of `input` with a fresh reader, as a new connection would.
fn frame_all(input: &[u8]) -> usize {
    let mut reader = LineReader::new(input);
    let mut bytes = 0;
    while let Some(Ok(line)) = reader.next_line() {
        bytes += black_box(line).len();
    }
    bytes
}

fn memchr_baseline(input: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', input).count()
}

fn framing(c: &mut Criterion) {
    for (name, input) in [
        ("4mib_line", one_big_line()),
        ("4mib_line_x8", eight_big_lines()),
        ("10k_small_lines", many_small_lines()),
    ] {
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("line_reader", input.len()),
            &input[..],
            |b, input| b.iter(|| frame_all(black_box(input))),
        );
        group.bench_with_input(
            BenchmarkId::new("memchr_baseline", input.len()),
            &input[..],
            |b, input| b.iter(|| memchr_baseline(black_box(input))),
        );
        group.finish();
    }
}

criterion_group!(benches, framing);
criterion_main!(benches);
