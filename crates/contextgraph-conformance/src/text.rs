//! Bounding provider-controlled text before it goes into a report (public
//! so the host suite bounds its evidence the same way).

/// Longest single evidence line, in bytes: evidence quotes provider text
/// (messages, titles, ids), and a provider must not be able to make the
/// report as large as its answers.
pub const MAX_EVIDENCE_BYTES: usize = 600;

/// The longest prefix of `text` within `max` bytes, cut at a char boundary,
/// with `…` appended when something was cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A byte string shown to a person: lossy UTF-8, clipped.
pub fn show_bytes(bytes: &[u8], max: usize) -> String {
    let cut = &bytes[..bytes.len().min(max)];
    let mut text = String::from_utf8_lossy(cut).into_owned();
    if bytes.len() > max {
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_at_a_char_boundary() {
        assert_eq!(clip("abc", 5), "abc");
        assert_eq!(clip("aéb", 2), "a…");
        assert_eq!(show_bytes(b"abcdef", 3), "abc…");
    }
}
