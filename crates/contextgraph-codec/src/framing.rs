//! Sans-IO NDJSON line framing (REQUIREMENTS §1: one envelope per line).
//!
//! [`LineFramer`] is a small state machine that owns the only buffer a
//! connection needs. The caller moves bytes in and events out:
//!
//! 1. [`LineFramer::read_buf`] hands out free space; the caller fills some of
//!    it from any source (a blocking `read`, an async `read`, a test vector)
//!    and reports how much with [`LineFramer::commit`], or reports the end of
//!    input with [`LineFramer::finish_input`].
//! 2. [`LineFramer::next_event`] is called until it answers
//!    [`FrameEvent::NeedInput`] (or [`FrameEvent::End`]); each
//!    [`FrameEvent::Line`] is read with [`LineFramer::line`].
//!
//! Events carry no borrow, so a caller's I/O loop can match on one and then
//! keep using the framer; only [`LineFramer::line`] borrows, right where the
//! line is handed on.
//!
//! # Rules
//!
//! - A line ends at `\n`. One `\r` right before it is stripped, so CRLF peers
//!   work; the end of input also ends a line (with the same `\r` rule), so an
//!   unterminated last line is still delivered.
//! - Blank lines — empty, or only spaces, tabs and `\r` — are skipped silently:
//!   they carry no envelope, and treating them as errors would punish peers
//!   that pretty-print a trailing newline.
//! - The cap counts *payload* bytes only: the `\n` and the stripped `\r` are
//!   not counted. A payload of exactly `max_line_bytes` is accepted, one more
//!   byte is rejected.
//! - A longer line is never buffered whole. As soon as it is known to be too
//!   long its bytes are dropped as they arrive, up to the next `\n`, and a
//!   single [`FrameEvent::Oversized`] reports it; framing then carries on with
//!   the next line, so nothing before or after the bad line is lost. The cap is
//!   checked before blankness: a framer does not look inside a line it will not
//!   buffer.
//! - Lines are bytes. Whether they are UTF-8 (or JSON) is for the envelope
//!   decoder; [`invalid_utf8_offset`] helps it say why a line was rejected.
//!
//! # Memory
//!
//! One growable buffer is reused for the whole stream: consumed lines are
//! dropped by moving a cursor, and the unfinished tail is moved to the front
//! only when free space runs short, so every byte is moved at most once. For a
//! caller that drains events before reading again, the buffer never grows past
//! `max_line_bytes + 1 + read_chunk_bytes` (a maximal payload, its `\r`, and
//! one read), and a line is searched for `\n` only once, with `memchr`.

use std::ops::Range;

/// Default cap on the payload of one line: 16 MiB.
///
/// Large enough for any honest envelope (a frames result with inline
/// content), small enough that a peer cannot make us buffer without bound.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Default minimum free space [`LineFramer::read_buf`] offers: 64 KiB.
///
/// Big enough that a bulk transfer takes few system calls, small enough to be
/// a negligible addition to the line cap.
pub const DEFAULT_READ_CHUNK_BYTES: usize = 64 * 1024;

/// What [`LineFramer::next_event`] found.
///
/// The event owns no data, so a reader loop can inspect it and keep driving
/// the framer; the bytes of a [`FrameEvent::Line`] are read with
/// [`LineFramer::line`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameEvent {
    /// A complete, non-blank line is available from [`LineFramer::line`].
    Line,
    /// A line whose payload exceeded the cap was dropped.
    ///
    /// Framing continues with the next line: this is a per-line error, not the
    /// end of the stream.
    Oversized {
        /// Payload bytes of the dropped line (terminator and a trailing `\r`
        /// excluded, as for the cap). Always greater than the cap.
        discarded_bytes: u64,
    },
    /// Every committed byte has been framed; supply more input (or finish it).
    NeedInput,
    /// Input is finished and every line in it has been reported.
    End,
}

/// Progress through a line that is being dropped because it is too long.
#[derive(Debug, Clone, Copy)]
struct Discard {
    /// Bytes dropped so far, `\r` included.
    bytes: u64,
    /// Whether the last dropped byte was `\r`, which must not be counted as
    /// payload if `\n` follows it.
    last_was_cr: bool,
}

impl Discard {
    fn payload_bytes(self) -> u64 {
        self.bytes - u64::from(self.last_was_cr)
    }
}

/// A sans-IO NDJSON line framer with a per-line byte cap.
///
/// See the [module documentation](self) for the framing rules and the memory
/// bound.
///
/// ```
/// use contextgraph_codec::{FrameEvent, LineFramer};
///
/// let mut framer = LineFramer::new(8);
/// let input = b"{\"a\":1}\r\n\n{\"too\":\"long\"}\n{}";
/// let space = framer.read_buf();
/// space[..input.len()].copy_from_slice(input);
/// framer.commit(input.len());
/// framer.finish_input();
///
/// assert_eq!(framer.next_event(), FrameEvent::Line);
/// assert_eq!(framer.line(), b"{\"a\":1}");
/// assert_eq!(framer.next_event(), FrameEvent::Oversized { discarded_bytes: 14 });
/// assert_eq!(framer.next_event(), FrameEvent::Line);
/// assert_eq!(framer.line(), b"{}");
/// assert_eq!(framer.next_event(), FrameEvent::End);
/// ```
#[derive(Debug)]
pub struct LineFramer {
    max_line_bytes: usize,
    read_chunk_bytes: usize,
    /// Fully initialised storage; `buf.len()` is the usable window.
    buf: Vec<u8>,
    /// Start of the line being assembled.
    start: usize,
    /// Bytes before this index are known to hold no `\n` of the current line.
    scanned: usize,
    /// End of committed input.
    end: usize,
    discard: Option<Discard>,
    input_finished: bool,
    /// The line last reported by [`FrameEvent::Line`]; empty otherwise.
    line: Range<usize>,
}

impl Default for LineFramer {
    /// A framer capped at [`DEFAULT_MAX_LINE_BYTES`].
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl LineFramer {
    /// A framer that rejects lines whose payload exceeds `max_line_bytes`.
    ///
    /// No memory is allocated until the first [`read_buf`](Self::read_buf).
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            max_line_bytes,
            read_chunk_bytes: DEFAULT_READ_CHUNK_BYTES,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            end: 0,
            discard: None,
            input_finished: false,
            line: 0..0,
        }
    }

    /// Sets the minimum free space [`read_buf`](Self::read_buf) offers
    /// (at least 1 byte; default [`DEFAULT_READ_CHUNK_BYTES`]).
    #[must_use]
    pub fn with_read_chunk_bytes(mut self, read_chunk_bytes: usize) -> Self {
        self.read_chunk_bytes = read_chunk_bytes.max(1);
        self
    }

    /// The payload cap this framer enforces.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// The minimum free space [`read_buf`](Self::read_buf) offers.
    pub fn read_chunk_bytes(&self) -> usize {
        self.read_chunk_bytes
    }

    /// Bytes currently allocated for buffering, for memory accounting.
    pub fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Free space to read input into: at least
    /// [`read_chunk_bytes`](Self::read_chunk_bytes) long, never empty, so a
    /// reader that gets `Ok(0)` from it really is at end of input.
    ///
    /// Call [`next_event`](Self::next_event) until it returns
    /// [`FrameEvent::NeedInput`] before asking for more space; that is what
    /// keeps the buffer within the cap. (A caller that does not still gets
    /// every line, only without the memory bound.) The slice returned by a
    /// previous [`line`](Self::line) is invalidated.
    pub fn read_buf(&mut self) -> &mut [u8] {
        self.line = 0..0;
        if self.start == self.end {
            // Nothing pending: rewind for free instead of moving bytes later.
            self.start = 0;
            self.scanned = 0;
            self.end = 0;
        }
        if self.spare() < self.read_chunk_bytes {
            if self.start > 0 {
                // Move the unfinished tail to the front. The tail then stays at
                // offset 0 until its line completes, so no byte moves twice.
                self.buf.copy_within(self.start..self.end, 0);
                self.scanned -= self.start;
                self.end -= self.start;
                self.start = 0;
            }
            if self.spare() < self.read_chunk_bytes {
                self.grow();
            }
        }
        &mut self.buf[self.end..]
    }

    /// Records that the first `n` bytes of the last [`read_buf`](Self::read_buf)
    /// slice now hold input. `n` larger than that slice is clamped to it.
    pub fn commit(&mut self, n: usize) {
        self.end += n.min(self.spare());
    }

    /// Records the end of input. The unterminated tail, if any, is then
    /// framed as a last line.
    pub fn finish_input(&mut self) {
        self.input_finished = true;
    }

    /// Frames the next line out of the committed input.
    ///
    /// Blank lines are skipped inside this call; an oversized line is
    /// reported once, after its end has been seen (or input finished).
    pub fn next_event(&mut self) -> FrameEvent {
        self.line = 0..0;
        loop {
            if let Some(discard) = self.discard {
                return self.skip_oversized(discard);
            }
            match memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                Some(offset) => {
                    let newline = self.scanned + offset;
                    let line = self.start..newline;
                    self.start = newline + 1;
                    self.scanned = self.start;
                    if let Some(event) = self.complete_line(line) {
                        return event;
                    }
                }
                None => {
                    self.scanned = self.end;
                    let pending = &self.buf[self.start..self.end];
                    let last_was_cr = pending.last() == Some(&b'\r');
                    // A pending tail of max + 1 bytes can still be a maximal
                    // payload plus the `\r` of a CRLF; anything else that long
                    // is certainly oversized and is dropped from now on.
                    let limit = self.max_line_bytes.saturating_add(1);
                    if pending.len() > limit || (pending.len() == limit && !last_was_cr) {
                        self.discard = Some(Discard {
                            bytes: pending.len() as u64,
                            last_was_cr,
                        });
                        self.start = self.end;
                        self.scanned = self.end;
                        continue;
                    }
                    if !self.input_finished {
                        return FrameEvent::NeedInput;
                    }
                    if pending.is_empty() {
                        return FrameEvent::End;
                    }
                    // End of input ends the last line.
                    let line = self.start..self.end;
                    self.start = self.end;
                    if let Some(event) = self.complete_line(line) {
                        return event;
                    }
                }
            }
        }
    }

    /// The line reported by the last [`FrameEvent::Line`], without its
    /// terminator; empty if the last event was not a line.
    pub fn line(&self) -> &[u8] {
        self.buf.get(self.line.clone()).unwrap_or_default()
    }

    fn spare(&self) -> usize {
        self.buf.len().saturating_sub(self.end)
    }

    /// Enlarges the window so at least one read chunk fits after `end`.
    fn grow(&mut self) {
        let needed = self.end.saturating_add(self.read_chunk_bytes);
        // Doubling keeps growth amortised-linear; the ceiling keeps it within
        // the cap, which already leaves room for a read after a maximal tail.
        let ceiling = self
            .max_line_bytes
            .saturating_add(1)
            .saturating_add(self.read_chunk_bytes);
        let new_len = self.buf.len().saturating_mul(2).min(ceiling).max(needed);
        self.buf.reserve_exact(new_len - self.buf.len());
        self.buf.resize(new_len, 0);
    }

    /// Classifies a terminated line (`\n` already excluded): `None` if it is
    /// blank and skipped.
    fn complete_line(&mut self, mut line: Range<usize>) -> Option<FrameEvent> {
        if line.end > line.start && self.buf[line.end - 1] == b'\r' {
            line.end -= 1;
        }
        let payload = &self.buf[line.clone()];
        if payload.len() > self.max_line_bytes {
            return Some(FrameEvent::Oversized {
                discarded_bytes: payload.len() as u64,
            });
        }
        if is_blank(payload) {
            return None;
        }
        self.line = line;
        Some(FrameEvent::Line)
    }

    /// Drops pending bytes of an oversized line until its end.
    fn skip_oversized(&mut self, mut discard: Discard) -> FrameEvent {
        let pending = &self.buf[self.start..self.end];
        let (dropped, consumed, line_ended) = match memchr::memchr(b'\n', pending) {
            Some(offset) => (offset, offset + 1, true),
            None => (pending.len(), pending.len(), self.input_finished),
        };
        if dropped > 0 {
            discard.last_was_cr = pending[dropped - 1] == b'\r';
        }
        discard.bytes += dropped as u64;
        self.start += consumed;
        self.scanned = self.start;
        if line_ended {
            self.discard = None;
            FrameEvent::Oversized {
                discarded_bytes: discard.payload_bytes(),
            }
        } else {
            self.discard = Some(discard);
            FrameEvent::NeedInput
        }
    }
}

/// Whether a line carries nothing: empty, or only spaces, tabs and `\r`.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Byte offset of the first invalid UTF-8 sequence in `line`, or `None` if the
/// line is valid UTF-8.
///
/// For error reports only: the envelope decoder validates UTF-8 as it parses,
/// so this is called after a line has already been rejected, to tell a peer
/// "not UTF-8 at byte N" instead of a generic syntax error.
pub fn invalid_utf8_offset(line: &[u8]) -> Option<usize> {
    std::str::from_utf8(line).err().map(|e| e.valid_up_to())
}
