//! Framing behaviours of the async reader (feature `tokio`).

use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

use crate::common::{line, reference, ChunkedReader, Item};
use contextgraph_codec::{AsyncLineReader, FrameError, LineFramer};
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

/// An async source that hands out input in fixed-size pieces and answers
/// `Pending` before every piece, as a real pipe does when the peer is slow.
struct SlowSource<'a> {
    pieces: ChunkedReader<'a>,
    ready: bool,
    fail_at_end: Option<io::ErrorKind>,
}

impl<'a> SlowSource<'a> {
    fn new(data: &'a [u8], sizes: &[usize]) -> Self {
        Self {
            pieces: ChunkedReader::new(data, sizes),
            ready: false,
            fail_at_end: None,
        }
    }
}

impl AsyncRead for SlowSource<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.ready {
            self.ready = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.ready = false;
        let piece = self.pieces.next_piece(buf.remaining());
        if piece.is_empty() {
            if let Some(kind) = self.fail_at_end.take() {
                return Poll::Ready(Err(io::Error::new(kind, "pipe trouble")));
            }
        }
        buf.put_slice(piece);
        Poll::Ready(Ok(()))
    }
}

async fn collect<R: AsyncRead + Unpin>(reader: &mut AsyncLineReader<R>) -> Vec<Item> {
    let mut items = Vec::new();
    while let Some(item) = reader.next_line().await {
        match item {
            Ok(line) => items.push(Item::Line(line.to_vec())),
            Err(FrameError::Oversized {
                discarded_bytes, ..
            }) => items.push(Item::Oversized(discarded_bytes)),
            Err(other) => panic!("unexpected error: {other}"),
        }
    }
    items
}

#[tokio::test]
async fn async_reader_frames_like_the_reference_model_in_small_pieces() {
    let input = b"{\"a\":1}\r\n\n  \n0123456789abcdef\n\xff\xfe\n{\"b\":2}\nxxxxxxxxxxxxxxxxxxxx\r\n{\"c\":3}";
    let want = reference(input, 10);
    assert_eq!(
        want,
        vec![
            line(b"{\"a\":1}"),
            Item::Oversized(16),
            line(b"\xff\xfe"),
            line(b"{\"b\":2}"),
            Item::Oversized(20),
            line(b"{\"c\":3}"),
        ]
    );
    for sizes in [&[1][..], &[2], &[3], &[7], &[4, 1, 9]] {
        let framer = LineFramer::new(10).with_read_chunk_bytes(8);
        let mut reader = AsyncLineReader::with_framer(SlowSource::new(input, sizes), framer);
        assert_eq!(collect(&mut reader).await, want, "pieces of {sizes:?}");
    }
}

#[tokio::test]
async fn async_oversized_line_is_an_error_item_and_the_stream_goes_on() {
    let input: &[u8] = b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n{\"after\":true}\n";
    let mut reader = AsyncLineReader::with_framer(input, LineFramer::new(16));
    assert!(matches!(
        reader.next_line().await,
        Some(Err(FrameError::Oversized {
            discarded_bytes: 40,
            max: 16
        }))
    ));
    assert_eq!(
        reader.next_line().await.and_then(Result::ok),
        Some(&b"{\"after\":true}"[..])
    );
    assert!(reader.next_line().await.is_none());
}

#[tokio::test]
async fn async_lines_arrive_through_a_pipe_written_in_small_pieces() {
    let (mut writer, pipe) = tokio::io::duplex(64);
    let lines: Vec<String> = (0..500)
        .map(|i| format!("{{\"type\":\"frames\",\"id\":\"q{i}\"}}"))
        .collect();
    let wire = lines.iter().map(|l| format!("{l}\r\n")).collect::<String>();
    let sender = tokio::spawn(async move {
        for piece in wire.as_bytes().chunks(5) {
            writer.write_all(piece).await?;
        }
        writer.shutdown().await
    });
    let mut reader = AsyncLineReader::new(pipe);
    let got = collect(&mut reader).await;
    sender.await.expect("writer task").expect("writes");
    assert_eq!(
        got,
        lines.iter().map(|l| line(l.as_bytes())).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn async_next_line_is_cancel_safe() {
    let input = b"{\"a\":1}\n{\"b\":2}\n";
    let mut reader =
        AsyncLineReader::with_framer(SlowSource::new(input, &[3]), LineFramer::new(64));
    // Poll a few futures part-way and drop them, as a lost `select!` would.
    for _ in 0..3 {
        let future = pin!(reader.next_line());
        let mut cx = Context::from_waker(Waker::noop());
        assert!(future.poll(&mut cx).is_pending());
    }
    assert_eq!(
        collect(&mut reader).await,
        vec![line(b"{\"a\":1}"), line(b"{\"b\":2}")]
    );
}

#[tokio::test]
async fn async_io_error_is_reported_once_then_the_stream_ends() {
    let mut source = SlowSource::new(b"{\"a\":1}\n{\"partial\"", &[64]);
    source.fail_at_end = Some(io::ErrorKind::ConnectionReset);
    let mut reader = AsyncLineReader::new(source);
    assert_eq!(
        reader.next_line().await.and_then(Result::ok),
        Some(&b"{\"a\":1}"[..])
    );
    match reader.next_line().await {
        Some(Err(FrameError::Io(e))) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset),
        other => panic!("expected an I/O error, got {other:?}"),
    }
    assert!(reader.next_line().await.is_none());
}
