//! Lines in, envelopes out: the NDJSON framing and the envelope decoder
//! joined for the common case of a blocking stdio peer.

use std::io::Read;

use crate::decode::{decode_envelope, DecodeError};
use crate::envelope::Envelope;
use crate::framing::LineFramer;
use crate::reader::{FrameError, LineReader};

/// Why one message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The line could not be framed: oversized (recoverable) or I/O (terminal).
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The line was framed but is not an envelope (recoverable: answer
    /// `bad_request` and read on).
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

impl ReadError {
    /// Whether reading can go on after this error (everything but I/O failure).
    pub fn is_recoverable(&self) -> bool {
        !matches!(self, ReadError::Frame(FrameError::Io(_)))
    }
}

/// Reads envelopes, one per line, from a blocking source. A bad line yields
/// one `Err` item and reading continues with the next line.
pub struct EnvelopeReader<R> {
    lines: LineReader<R>,
}

impl<R: Read> EnvelopeReader<R> {
    /// A reader with the default 16 MiB line cap.
    pub fn new(inner: R) -> Self {
        EnvelopeReader {
            lines: LineReader::new(inner),
        }
    }

    /// A reader with a configured framer (line cap, read size).
    pub fn with_framer(inner: R, framer: LineFramer) -> Self {
        EnvelopeReader {
            lines: LineReader::with_framer(inner, framer),
        }
    }

    /// The next envelope, a per-line error, or `None` at end of input.
    pub fn next_envelope(&mut self) -> Option<Result<Envelope, ReadError>> {
        Some(match self.lines.next_line()? {
            Ok(line) => decode_envelope(line).map_err(ReadError::from),
            Err(e) => Err(ReadError::from(e)),
        })
    }

    /// The underlying line reader.
    pub fn lines(&mut self) -> &mut LineReader<R> {
        &mut self.lines
    }
}

impl<R: Read> Iterator for EnvelopeReader<R> {
    type Item = Result<Envelope, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_envelope()
    }
}
