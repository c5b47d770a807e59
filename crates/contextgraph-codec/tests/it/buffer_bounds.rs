//! Memory behaviour of the framer: bounded by the cap, reused across lines.
//! These tests count bytes, they do not time anything.

use contextgraph_codec::{FrameError, LineFramer, LineReader};

const MIB: usize = 1024 * 1024;
const CHUNK: usize = 64 * 1024;

fn payload(len: usize) -> Vec<u8> {
    let mut line = b"{\"content\":\"".to_vec();
    line.resize(len - 2, b'x');
    line.extend_from_slice(b"\"}");
    line
}

#[test]
fn buffer_stays_below_twice_a_4_mib_line_plus_one_read() {
    let line = payload(4 * MIB);
    let mut input = line.clone();
    input.extend_from_slice(b"\n{\"next\":1}\n");
    let mut reader = LineReader::with_framer(
        &input[..],
        LineFramer::default().with_read_chunk_bytes(CHUNK),
    );
    assert_eq!(reader.next_line().and_then(Result::ok), Some(&line[..]));
    assert_eq!(
        reader.next_line().and_then(Result::ok),
        Some(&b"{\"next\":1}"[..])
    );
    assert!(reader.next_line().is_none());
    let capacity = reader.framer().buffer_capacity();
    assert!(
        capacity < 2 * line.len() + CHUNK,
        "capacity {capacity} for a {} byte line",
        line.len()
    );
}

#[test]
fn buffer_does_not_grow_past_the_cap_while_dropping_an_oversized_line() {
    let max = MIB;
    let mut input = vec![b'x'; 8 * MIB];
    input.extend_from_slice(b"\n{\"next\":1}\n");
    let mut reader = LineReader::with_framer(
        &input[..],
        LineFramer::new(max).with_read_chunk_bytes(CHUNK),
    );
    assert!(matches!(
        reader.next_line(),
        Some(Err(FrameError::Oversized { discarded_bytes, .. })) if discarded_bytes == 8 * MIB as u64
    ));
    assert_eq!(
        reader.next_line().and_then(Result::ok),
        Some(&b"{\"next\":1}"[..])
    );
    let capacity = reader.framer().buffer_capacity();
    assert!(
        capacity <= max + 1 + CHUNK,
        "capacity {capacity} with a cap of {max}"
    );
}

#[test]
fn buffer_is_reused_across_many_lines() {
    let mut input = Vec::new();
    for i in 0..20_000 {
        input.extend_from_slice(format!("{{\"type\":\"frames\",\"id\":\"q{i}\"}}\n").as_bytes());
    }
    let mut reader = LineReader::with_framer(
        &input[..],
        LineFramer::default().with_read_chunk_bytes(4096),
    );
    let mut lines = 0;
    let mut largest = 0;
    while let Some(item) = reader.next_line() {
        assert!(item.is_ok());
        lines += 1;
        largest = largest.max(reader.framer().buffer_capacity());
    }
    assert_eq!(lines, 20_000);
    assert!(
        largest <= 2 * 4096,
        "small lines must not grow the buffer: {largest}"
    );
}
