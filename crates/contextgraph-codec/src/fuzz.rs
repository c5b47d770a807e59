//! Fuzz target bodies (not API: hidden from the docs, may change any time).
//!
//! Each function is one coverage-guided target's whole body: the libFuzzer
//! programs in the repository's `fuzz/` workspace call it with the fuzzer's
//! bytes, and a stable test replays every committed seed and regression
//! input through the same function (`tests/it/fuzz_replay.rs`), so a crash
//! found once stays fixed without nightly. A body panics exactly when a
//! property is broken; bad input must give a typed error, never a panic.

use crate::{decode_envelope, encode_line, FrameEvent, LineFramer};

/// `envelope`: any bytes as one line. Decoding gives an envelope or a typed
/// error (whose message and id can be read); a decoded envelope encodes as
/// one line that decodes back to the same envelope and encodes to the same
/// bytes (the writer cannot produce what the reader would read otherwise).
pub fn envelope(data: &[u8]) {
    match decode_envelope(data) {
        Err(e) => {
            let _ = e.to_string();
            let _ = e.id();
        }
        Ok(env) => {
            let line = encode_line(&env).expect("a decoded envelope encodes");
            assert_eq!(line.last(), Some(&b'\n'), "an encoded line ends with \\n");
            assert!(
                !line[..line.len() - 1].contains(&b'\n'),
                "an encoded envelope is one line"
            );
            let again = decode_envelope(&line[..line.len() - 1])
                .unwrap_or_else(|e| panic!("an encoded envelope decodes: {e}"));
            let line2 = encode_line(&again).expect("encodes");
            assert_eq!(line, line2, "encode(decode(encode(e))) == encode(e)");
        }
    }
}

/// What a framer must report for `stream` with cap `max`, computed the
/// simple way (split on `\n`, strip one `\r`, cap before blankness).
fn expected_events(stream: &[u8], max: usize) -> Vec<Result<Vec<u8>, u64>> {
    let mut out = Vec::new();
    let mut parts: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop(); // the stream ended with `\n` (or was empty)
    }
    for part in parts {
        let payload = part.strip_suffix(b"\r").unwrap_or(part);
        if payload.len() > max {
            out.push(Err(payload.len() as u64));
        } else if !payload.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            out.push(Ok(payload.to_vec()));
        }
    }
    out
}

/// `framing`: byte 0 picks the line cap (1–64), byte 1 the read chunk
/// (1–16), byte 2 how many bytes each read commits (1–32); the rest is the
/// stream. The framer reports exactly the lines and oversized drops the
/// simple split does, in order, and its buffer stays within the documented
/// bound (cap + 1 + read chunk).
pub fn framing(data: &[u8]) {
    let [a, b, c, stream @ ..] = data else {
        return;
    };
    let max = 1 + usize::from(*a % 64);
    let chunk = 1 + usize::from(*b % 16);
    let step = 1 + usize::from(*c % 32);
    let mut framer = LineFramer::new(max).with_read_chunk_bytes(chunk);
    let mut got = Vec::new();
    let mut fed = 0;
    loop {
        match framer.next_event() {
            FrameEvent::Line => got.push(Ok(framer.line().to_vec())),
            FrameEvent::Oversized { discarded_bytes } => {
                assert!(
                    discarded_bytes > max as u64,
                    "an oversized line is over the cap"
                );
                got.push(Err(discarded_bytes));
            }
            FrameEvent::NeedInput => {
                if fed == stream.len() {
                    framer.finish_input();
                    continue;
                }
                let buf = framer.read_buf();
                let n = step.min(buf.len()).min(stream.len() - fed);
                buf[..n].copy_from_slice(&stream[fed..fed + n]);
                framer.commit(n);
                fed += n;
                assert!(
                    framer.buffer_capacity() <= max + 1 + chunk,
                    "framer buffer {} over the bound for cap {max}, chunk {chunk}",
                    framer.buffer_capacity()
                );
            }
            FrameEvent::End => break,
        }
    }
    assert_eq!(got, expected_events(stream, max), "framed events");
}
