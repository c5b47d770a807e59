//! Envelopes over a stream: garbage, oversized, blank and CRLF lines between
//! good ones cost exactly one error item each and lose nothing around them.

use contextgraph_codec::{
    encode_line, DecodeError, Envelope, EnvelopeReader, FrameError, LineFramer, ReadError,
};

/// A reader that hands out its input a few bytes at a time.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn bad_lines_between_good_ones_cost_one_error_each_and_nothing_else() {
    let mut input = Vec::new();
    input.extend(encode_line(&Envelope::handshake()).unwrap());
    input.extend(b"not json at all\n");
    input.extend(b"\n   \r\n");
    input.extend(vec![b'x'; 300]);
    input.extend(b"\n");
    input.extend(b"{\"type\":\"ping\"}\r\n");
    input.extend(b"{\"type\":\"shut\xffdown\"}\n");
    input.extend(b"{\"type\":\"shutdown\"}");
    for step in [1, 3, 64, 4096] {
        let reader =
            EnvelopeReader::with_framer(Trickle { data: &input, step }, LineFramer::new(256));
        let items: Vec<Result<Envelope, ReadError>> = reader.collect();
        assert_eq!(items.len(), 6, "step {step}: {items:?}");
        assert!(matches!(items[0], Ok(Envelope::Handshake { .. })));
        assert!(matches!(
            items[1],
            Err(ReadError::Decode(DecodeError::InvalidJson { .. }))
        ));
        assert!(matches!(
            items[2],
            Err(ReadError::Frame(FrameError::Oversized {
                discarded_bytes: 300,
                max: 256
            }))
        ));
        assert!(items[2].as_ref().is_err_and(ReadError::is_recoverable));
        assert!(
            matches!(&items[3], Ok(Envelope::Unknown { type_name, id: None }) if type_name == "ping")
        );
        assert!(matches!(
            items[4],
            Err(ReadError::Decode(DecodeError::InvalidUtf8 { .. }))
        ));
        assert!(
            matches!(items[5], Ok(Envelope::Shutdown)),
            "unterminated last line still read"
        );
    }
}
