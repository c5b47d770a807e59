//! Blocking line reader over any [`std::io::Read`], and the framing error type.

use std::io::{self, Read};

use crate::framing::{FrameEvent, LineFramer};

/// Why a line could not be delivered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A line was longer than the cap and was dropped unread.
    ///
    /// Recoverable: the next call yields the line after it. A provider should
    /// answer `bad_request` and carry on (R1) rather than end the session.
    #[error("line of {discarded_bytes} bytes exceeds the {max}-byte limit and was discarded")]
    Oversized {
        /// Payload bytes of the dropped line.
        discarded_bytes: u64,
        /// The cap in force.
        max: usize,
    },
    /// Reading from the underlying source failed.
    ///
    /// Terminal: the reader yields `None` afterwards. (`Interrupted` is
    /// retried and never reported.)
    #[error("reading a line failed")]
    Io(#[from] io::Error),
}

/// What a reader loop does after asking the framer for an event. Shared by the
/// blocking and the async reader so both recover from bad lines identically.
pub(crate) enum Step {
    Line,
    Error(FrameError),
    End,
    Read,
}

pub(crate) fn step(framer: &mut LineFramer) -> Step {
    match framer.next_event() {
        FrameEvent::Line => Step::Line,
        FrameEvent::Oversized { discarded_bytes } => Step::Error(FrameError::Oversized {
            discarded_bytes,
            max: framer.max_line_bytes(),
        }),
        FrameEvent::End => Step::End,
        FrameEvent::NeedInput => Step::Read,
    }
}

/// Feeds the outcome of one read into the framer; returns the error that
/// ends the stream, if any.
pub(crate) fn record_read(framer: &mut LineFramer, result: io::Result<usize>) -> Option<io::Error> {
    match result {
        Ok(0) => framer.finish_input(),
        Ok(n) => framer.commit(n),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
        Err(e) => return Some(e),
    }
    None
}

/// Yields the non-blank lines of a blocking byte stream, each capped in size.
///
/// A lending reader: [`next_line`](Self::next_line) borrows the line from the
/// reader's own buffer, so reading a line allocates nothing.
///
/// Unlike a `tokio-util` `FramedRead`, an error never silently ends the
/// stream: an oversized line is one `Err` item followed by the next line, so
/// a `while let Some(item) = reader.next_line()` loop sees every line.
///
/// ```
/// use contextgraph_codec::{FrameError, LineFramer, LineReader};
///
/// let input: &[u8] = b"{\"type\":\"handshake\"}\n{\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxx\"}\n{\"type\":\"shutdown\"}";
/// let mut reader = LineReader::with_framer(input, LineFramer::new(32));
/// let mut lines = Vec::new();
/// while let Some(item) = reader.next_line() {
///     match item {
///         Ok(line) => lines.push(line.to_vec()),
///         Err(FrameError::Oversized { .. }) => lines.push(b"<oversized>".to_vec()),
///         Err(other) => return Err(other),
///     }
/// }
/// assert_eq!(lines, [&b"{\"type\":\"handshake\"}"[..], b"<oversized>", b"{\"type\":\"shutdown\"}"]);
/// # Ok::<(), FrameError>(())
/// ```
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    framer: LineFramer,
    failed: bool,
}

impl<R: Read> LineReader<R> {
    /// A reader capped at [`DEFAULT_MAX_LINE_BYTES`](crate::DEFAULT_MAX_LINE_BYTES).
    pub fn new(inner: R) -> Self {
        Self::with_framer(inner, LineFramer::default())
    }

    /// A reader using `framer`'s cap and read size.
    pub fn with_framer(inner: R, framer: LineFramer) -> Self {
        Self {
            inner,
            framer,
            failed: false,
        }
    }

    /// The next non-blank line without its terminator, or the reason the next
    /// line could not be delivered; `None` at end of input or after an I/O
    /// error.
    pub fn next_line(&mut self) -> Option<Result<&[u8], FrameError>> {
        if self.failed {
            return None;
        }
        loop {
            match step(&mut self.framer) {
                Step::Line => return Some(Ok(self.framer.line())),
                Step::Error(e) => return Some(Err(e)),
                Step::End => return None,
                Step::Read => {}
            }
            let result = self.inner.read(self.framer.read_buf());
            if let Some(e) = record_read(&mut self.framer, result) {
                self.failed = true;
                return Some(Err(FrameError::Io(e)));
            }
        }
    }

    /// The framer, e.g. to read its cap or account for its memory.
    pub fn framer(&self) -> &LineFramer {
        &self.framer
    }

    /// The underlying source.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The underlying source; bytes already buffered are dropped.
    pub fn into_inner(self) -> R {
        self.inner
    }
}
