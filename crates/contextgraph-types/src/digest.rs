//! Digest and line-range grammar (F5, D1).

use std::fmt;

/// The digest prefix the protocol uses.
pub const SHA256_PREFIX: &str = "sha256:";

/// Whether `text` is `sha256:` followed by exactly 64 lowercase hex digits.
pub fn is_sha256_digest(text: &str) -> bool {
    match text.strip_prefix(SHA256_PREFIX) {
        Some(hex) => hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
        None => false,
    }
}

/// Format raw SHA-256 output as a wire digest (`sha256:` + lowercase hex).
pub fn format_sha256(bytes: &[u8; 32]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(SHA256_PREFIX.len() + 64);
    out.push_str(SHA256_PREFIX);
    for b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

/// A provenance line range `L<start>-<end>`: 1-based, inclusive, start ≤ end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineRange {
    /// First line (1-based).
    pub start: u32,
    /// Last line, inclusive.
    pub end: u32,
}

impl LineRange {
    /// A range; `None` unless 1 ≤ start ≤ end.
    pub fn new(start: u32, end: u32) -> Option<Self> {
        (start >= 1 && start <= end).then_some(LineRange { start, end })
    }

    /// Parse `L<start>-<end>` exactly (no spaces, no signs, no leading `+`).
    pub fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix('L')?;
        let (a, b) = rest.split_once('-')?;
        LineRange::new(parse_line_number(a)?, parse_line_number(b)?)
    }

    /// Whether two ranges share at least one line.
    pub fn overlaps(&self, other: &LineRange) -> bool {
        self.start <= other.end && other.start <= self.end
    }

    /// Number of lines covered.
    pub fn len(&self) -> u32 {
        self.end - self.start + 1
    }

    /// Always false: a range covers at least one line. Present for clippy's `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }
}

fn parse_line_number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

impl fmt::Display for LineRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}-{}", self.start, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_grammar_is_strict() {
        let ok = format!("sha256:{}", "0a".repeat(32));
        assert!(is_sha256_digest(&ok));
        assert!(!is_sha256_digest(&ok.to_uppercase()));
        assert!(!is_sha256_digest(&format!("sha256:{}", "0A".repeat(32))));
        assert!(!is_sha256_digest("sha256:9f2c3e7a1b"));
        assert!(!is_sha256_digest(&format!("sha512:{}", "0a".repeat(32))));
        assert!(!is_sha256_digest(&format!("sha256:{}0", "0a".repeat(32))));
        assert!(!is_sha256_digest(&format!("sha256:{}", "g".repeat(64))));
    }

    #[test]
    fn format_sha256_is_lowercase_hex() {
        let d = format_sha256(&[0xab; 32]);
        assert_eq!(d, format!("sha256:{}", "ab".repeat(32)));
        assert!(is_sha256_digest(&d));
    }

    #[test]
    fn line_ranges_parse_exactly() {
        assert_eq!(LineRange::parse("L120-160"), LineRange::new(120, 160));
        assert_eq!(LineRange::parse("L1-1").map(|r| r.len()), Some(1));
        for bad in [
            "L0-3",
            "L5-4",
            "120-160",
            "L120",
            "L-1-3",
            "L+1-3",
            "l1-3",
            "L1 -3",
            "L1-3 ",
            "L1-99999999999",
        ] {
            assert_eq!(LineRange::parse(bad), None, "{bad}");
        }
        let a = LineRange::new(10, 20).unwrap();
        assert!(a.overlaps(&LineRange::new(20, 30).unwrap()));
        assert!(!a.overlaps(&LineRange::new(21, 30).unwrap()));
        assert_eq!(a.to_string(), "L10-20");
    }
}
