//! Framing behaviours of the NDJSON line framer and the blocking reader.

use std::io::{self, Read};

use crate::common::{
    collect, frame_sans_io, frame_with_reader, line, reference, ChunkedReader, Item,
};
use contextgraph_codec::{
    invalid_utf8_offset, FrameError, LineFramer, LineReader, DEFAULT_MAX_LINE_BYTES,
};
use proptest::prelude::*;

/// Frames `input` every way the crate offers and checks they agree before
/// returning what they found.
fn frame(input: &[u8], max: usize) -> Vec<Item> {
    let whole = collect(&mut LineReader::with_framer(input, LineFramer::new(max)));
    for sizes in [&[1][..], &[2], &[3], &[7], &[1, 5, 2, 64]] {
        assert_eq!(
            frame_with_reader(input, max, sizes),
            whole,
            "reader, pieces of {sizes:?}"
        );
        assert_eq!(
            frame_sans_io(input, max, sizes),
            whole,
            "sans-IO, pieces of {sizes:?}"
        );
    }
    whole
}

#[test]
fn round_trip_of_many_lines_yields_each_line_in_order() {
    let lines: Vec<String> = (0..5_000)
        .map(|i| {
            format!(
                r#"{{"type":"query","id":"q{i}","query":{{"goal":"{}"}}}}"#,
                "g".repeat(i % 97)
            )
        })
        .collect();
    let input = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let mut reader = LineReader::new(input.as_bytes());
    let got = collect(&mut reader);
    let want: Vec<Item> = lines.iter().map(|l| line(l.as_bytes())).collect();
    assert_eq!(got, want);
}

#[test]
fn input_split_into_small_chunks_yields_the_same_lines() {
    let input = b"{\"type\":\"handshake\"}\n{\"type\":\"shutdown\"}\r\n\n  \n{\"x\":[1,2,3]}";
    let want = vec![
        line(b"{\"type\":\"handshake\"}"),
        line(b"{\"type\":\"shutdown\"}"),
        line(b"{\"x\":[1,2,3]}"),
    ];
    for sizes in [1, 2, 3, 7] {
        assert_eq!(
            frame_with_reader(input, 64, &[sizes]),
            want,
            "reader, {sizes}-byte pieces"
        );
        assert_eq!(
            frame_sans_io(input, 64, &[sizes]),
            want,
            "sans-IO, {sizes}-byte pieces"
        );
    }
}

#[test]
fn garbage_then_valid_lines_are_each_delivered_in_order() {
    // The framer does not judge content: garbage is a line like any other and
    // must not swallow its neighbours.
    let input = b"not json at all\n{\"type\":\"handshake\"}\n}{][\n{\"type\":\"shutdown\"}\n";
    assert_eq!(
        frame(input, 64),
        vec![
            line(b"not json at all"),
            line(b"{\"type\":\"handshake\"}"),
            line(b"}{]["),
            line(b"{\"type\":\"shutdown\"}"),
        ]
    );
}

#[test]
fn oversized_line_is_reported_once_then_the_next_line_is_delivered() {
    let input = b"{\"ok\":1}\n0123456789abcdef\n{\"ok\":2}\n";
    assert_eq!(
        frame(input, 10),
        vec![
            line(b"{\"ok\":1}"),
            Item::Oversized(16),
            line(b"{\"ok\":2}")
        ]
    );
}

#[test]
fn oversized_first_line_does_not_hide_the_following_lines() {
    let input = b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n{\"a\":1}\n{\"b\":2}\n";
    assert_eq!(
        frame(input, 10),
        vec![Item::Oversized(30), line(b"{\"a\":1}"), line(b"{\"b\":2}")]
    );
}

#[test]
fn oversized_last_line_is_reported_before_end_of_input() {
    let input = b"{\"a\":1}\nxxxxxxxxxxxxxxxxxxxx\n";
    assert_eq!(
        frame(input, 10),
        vec![line(b"{\"a\":1}"), Item::Oversized(20)]
    );
}

#[test]
fn unterminated_oversized_last_line_is_reported_at_end_of_input() {
    let input = b"{\"a\":1}\nxxxxxxxxxxxxxxxxxxxxxxxxx";
    assert_eq!(
        frame(input, 10),
        vec![line(b"{\"a\":1}"), Item::Oversized(25)]
    );
}

#[test]
fn consecutive_oversized_lines_are_each_reported() {
    let input = b"aaaaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbb\r\n{}\ncccccccccccc";
    assert_eq!(
        frame(input, 10),
        vec![
            Item::Oversized(12),
            Item::Oversized(20),
            line(b"{}"),
            Item::Oversized(12),
        ]
    );
}

#[test]
fn oversized_line_spanning_many_reads_is_reported_once_with_its_full_length() {
    let long = vec![b'x'; 10_000];
    let mut input = long.clone();
    input.extend_from_slice(b"\r\n{\"after\":true}\n");
    let want = vec![Item::Oversized(10_000), line(b"{\"after\":true}")];
    assert_eq!(frame_with_reader(&input, 100, &[1]), want);
    assert_eq!(frame_with_reader(&input, 100, &[3, 1000]), want);
    assert_eq!(frame(&input, 100), want);
}

#[test]
fn line_of_exactly_max_payload_bytes_is_accepted() {
    let input = b"0123456789\n0123456789\r\n0123456789";
    assert_eq!(frame(input, 10), vec![line(b"0123456789"); 3]);
}

#[test]
fn line_of_max_plus_one_payload_bytes_is_rejected() {
    let input = b"0123456789a\n0123456789a\r\n0123456789a";
    assert_eq!(frame(input, 10), vec![Item::Oversized(11); 3]);
}

#[test]
fn terminator_bytes_do_not_count_against_the_cap() {
    // 10 payload bytes + "\r\n" is 12 bytes on the wire, still within a cap of 10.
    assert_eq!(frame(b"0123456789\r\n", 10), vec![line(b"0123456789")]);
    // ...and a `\r` that is *not* followed by `\n` is payload.
    assert_eq!(frame(b"01234567\r9\n", 10), vec![line(b"01234567\r9")]);
    assert_eq!(frame(b"012345678\r9\r\n", 10), vec![Item::Oversized(11)]);
}

#[test]
fn oversized_error_names_the_length_and_the_cap() {
    let mut reader = LineReader::with_framer(&b"0123456789abc\n{}\n"[..], LineFramer::new(10));
    match reader.next_line() {
        Some(Err(
            err @ FrameError::Oversized {
                discarded_bytes: 13,
                max: 10,
            },
        )) => {
            assert_eq!(
                err.to_string(),
                "line of 13 bytes exceeds the 10-byte limit and was discarded"
            );
        }
        other => panic!("expected an oversized error, got {other:?}"),
    }
    assert_eq!(reader.next_line().and_then(Result::ok), Some(&b"{}"[..]));
    assert!(reader.next_line().is_none());
}

#[test]
fn cap_of_zero_rejects_every_non_blank_line_without_panicking() {
    assert_eq!(
        frame(b"a\n\n \nbc\r\n", 0),
        vec![Item::Oversized(1), Item::Oversized(1), Item::Oversized(2)]
    );
}

#[test]
fn blank_and_whitespace_only_lines_are_skipped() {
    let input = b"\n\n{\"a\":1}\n   \n\t\n \t \r\n\r\n\r\r\n{\"b\":2}\n\n";
    assert_eq!(
        frame(input, 64),
        vec![line(b"{\"a\":1}"), line(b"{\"b\":2}")]
    );
}

#[test]
fn only_blank_lines_yield_nothing() {
    assert_eq!(frame(b"\n \n\t\r\n", 64), Vec::<Item>::new());
    assert_eq!(frame(b"", 64), Vec::<Item>::new());
}

#[test]
fn crlf_line_endings_are_stripped() {
    let input = b"{\"a\":1}\r\n{\"b\":2}\r\n{\"c\":3}\n";
    assert_eq!(
        frame(input, 64),
        vec![line(b"{\"a\":1}"), line(b"{\"b\":2}"), line(b"{\"c\":3}")]
    );
}

#[test]
fn only_one_carriage_return_is_stripped_and_inner_ones_are_kept() {
    assert_eq!(
        frame(b"a\r\r\nb\rc\n", 64),
        vec![line(b"a\r"), line(b"b\rc")]
    );
}

#[test]
fn invalid_utf8_line_is_delivered_as_bytes_and_the_lines_around_it_survive() {
    let input = b"{\"a\":1}\n\xff\xfe{\"bad\":\"\xc3\x28\"}\n{\"b\":2}\n";
    let got = frame(input, 64);
    assert_eq!(
        got,
        vec![
            line(b"{\"a\":1}"),
            line(b"\xff\xfe{\"bad\":\"\xc3\x28\"}"),
            line(b"{\"b\":2}"),
        ]
    );
    let Item::Line(bad) = &got[1] else {
        unreachable!()
    };
    assert_eq!(invalid_utf8_offset(bad), Some(0));
}

#[test]
fn invalid_utf8_offset_points_at_the_first_bad_byte() {
    assert_eq!(invalid_utf8_offset(b"{\"type\":\"query\"}"), None);
    assert_eq!(
        invalid_utf8_offset("{\"goal\":\"caf\u{e9}\"}".as_bytes()),
        None
    );
    assert_eq!(invalid_utf8_offset(b"{\"goal\":\"caf\xe9\"}"), Some(12));
    assert_eq!(
        invalid_utf8_offset(b"ok\xf0\x9f"),
        Some(2),
        "truncated sequence"
    );
    assert_eq!(invalid_utf8_offset(b""), None);
}

#[test]
fn unterminated_last_line_is_delivered_at_end_of_input() {
    assert_eq!(
        frame(b"{\"a\":1}\n{\"b\":2}", 64),
        vec![line(b"{\"a\":1}"), line(b"{\"b\":2}")]
    );
    assert_eq!(
        frame(b"{\"only\":true}", 64),
        vec![line(b"{\"only\":true}")]
    );
}

#[test]
fn unterminated_last_line_loses_a_trailing_carriage_return_like_any_line() {
    assert_eq!(frame(b"{\"a\":1}\r", 64), vec![line(b"{\"a\":1}")]);
    assert_eq!(frame(b"0123456789\r", 10), vec![line(b"0123456789")]);
}

#[test]
fn our_recorded_stdio_session_frames_into_its_seven_envelopes() {
    let session = contextgraph_testkit::fixtures::transcript_bytes();
    let got = collect(&mut LineReader::new(&session[..]));
    assert_eq!(got.len(), 7);
    for item in &got {
        let Item::Line(envelope) = item else {
            panic!("unexpected {item:?}")
        };
        assert!(envelope.starts_with(b"{\"type\":\"") && envelope.ends_with(b"}"));
    }
    assert_eq!(got, reference(&session, DEFAULT_MAX_LINE_BYTES));
}

/// Interop: the shared transcript, written by another implementation.
#[test]
fn recorded_stdio_session_frames_into_its_seven_envelopes() {
    let Some(session) = contextgraph_testkit::interop::transcript_bytes() else {
        return;
    };
    let got = collect(&mut LineReader::new(&session[..]));
    assert_eq!(got.len(), 7);
    for item in &got {
        let Item::Line(envelope) = item else {
            panic!("unexpected {item:?}")
        };
        assert!(envelope.starts_with(b"{\"type\": \"") && envelope.ends_with(b"}"));
    }
    assert_eq!(got, reference(&session, DEFAULT_MAX_LINE_BYTES));
}

/// A source whose reads fail with a fixed error kind after some data.
struct FailingReader<'a> {
    data: &'a [u8],
    kind: io::ErrorKind,
    failures: usize,
}

impl Read for FailingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.failures > 0 && self.data.is_empty() {
            self.failures -= 1;
            return Err(io::Error::new(self.kind, "pipe trouble"));
        }
        self.data.read(buf)
    }
}

#[test]
fn io_error_is_reported_once_then_the_stream_ends() {
    let source = FailingReader {
        data: b"{\"a\":1}\n{\"b\"",
        kind: io::ErrorKind::BrokenPipe,
        failures: 1,
    };
    let mut reader = LineReader::new(source);
    assert_eq!(
        reader.next_line().and_then(Result::ok),
        Some(&b"{\"a\":1}"[..])
    );
    match reader.next_line() {
        Some(Err(FrameError::Io(e))) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe),
        other => panic!("expected an I/O error, got {other:?}"),
    }
    assert!(
        reader.next_line().is_none(),
        "the partial line is never delivered as complete"
    );
    assert!(reader.next_line().is_none());
}

#[test]
fn interrupted_reads_are_retried_transparently() {
    // Interrupted fires whenever the data runs out, three times, before EOF.
    let source = FailingReader {
        data: b"{\"a\":1}\n{\"b\":2}",
        kind: io::ErrorKind::Interrupted,
        failures: 3,
    };
    let got = collect(&mut LineReader::new(source));
    assert_eq!(got, vec![line(b"{\"a\":1}"), line(b"{\"b\":2}")]);
}

#[test]
fn reader_gives_back_its_source() {
    let reader = LineReader::new(ChunkedReader::new(b"{}\n", &[1]));
    assert_eq!(reader.framer().max_line_bytes(), DEFAULT_MAX_LINE_BYTES);
    let _source: ChunkedReader<'_> = reader.into_inner();
}

/// A line without `\n` or `\r`, sometimes blank, sometimes JSON-ish.
fn plain_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(
            any::<u8>().prop_filter("no terminator", |b| *b != b'\n' && *b != b'\r'),
            0..40
        ),
        prop::collection::vec(prop::sample::select(vec![b' ', b'\t']), 0..4),
        "[a-z{}\":,0-9]{1,30}".prop_map(String::into_bytes),
    ]
}

proptest! {
    #[test]
    fn framer_yields_exactly_the_non_blank_lines_in_order(
        lines in prop::collection::vec((plain_line(), any::<bool>()), 0..40),
        terminated in any::<bool>(),
        sizes in prop::collection::vec(1usize..17, 1..8),
    ) {
        let mut input = Vec::new();
        for (i, (l, crlf)) in lines.iter().enumerate() {
            input.extend_from_slice(l);
            if i + 1 < lines.len() || terminated {
                input.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
        let want: Vec<Item> = lines
            .iter()
            .filter(|(l, _)| !l.iter().all(|b| *b == b' ' || *b == b'\t'))
            .map(|(l, _)| line(l))
            .collect();
        prop_assert_eq!(&frame_with_reader(&input, 1024, &sizes), &want);
        prop_assert_eq!(&frame_sans_io(&input, 1024, &sizes), &want);
    }

    #[test]
    fn arbitrary_bytes_frame_like_the_reference_model(
        input in prop::collection::vec(
            prop_oneof![4 => any::<u8>(), 2 => Just(b'\n'), 2 => Just(b'\r'), 1 => Just(b' ')],
            0..300,
        ),
        max in 0usize..24,
        sizes in prop::collection::vec(1usize..33, 1..8),
    ) {
        let want = reference(&input, max);
        prop_assert_eq!(&frame_with_reader(&input, max, &sizes), &want);
        prop_assert_eq!(&frame_sans_io(&input, max, &sizes), &want);
    }
}
