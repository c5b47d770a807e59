//! Bounding peer-controlled text before it goes into an error or a report.

/// At most `max_chars` characters of `text`, with control characters escaped
/// so a provider cannot forge extra lines in a log, and a marker when cut.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars) + 8);
    for (n, c) in text.chars().enumerate() {
        if n == max_chars {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// [`excerpt`] of raw bytes that may not be UTF-8.
pub fn excerpt_bytes(bytes: &[u8], max_chars: usize) -> String {
    let head = &bytes[..bytes.len().min(max_chars.saturating_mul(4))];
    excerpt(&String::from_utf8_lossy(head), max_chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_bounded_and_single_line() {
        assert_eq!(excerpt("abc", 10), "abc");
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("a\nb", 10), "a\\nb");
        assert_eq!(excerpt_bytes(b"\xffok", 10), "\u{fffd}ok");
    }
}
