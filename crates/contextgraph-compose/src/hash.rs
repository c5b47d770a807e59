//! SHA-256 as the composer uses it: digests are always recomputed from the
//! bytes in hand (D1, F5), never copied from what a provider declared.
//! The hashing itself is [`contextgraph_types::sha256`], shared with the SDK
//! and the host.

use contextgraph_types::digest::format_sha256;
/// The workspace's one SHA-256 (raw, wire form and [`ContentHasher`](contextgraph_types::ContentHasher)),
/// re-exported under the composer's names.
pub use contextgraph_types::sha256::{sha256, sha256_digest, Sha256Hasher};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A SHA-256 the composer computed itself, kept as 32 bytes (no string per
/// frame) and written in the wire form `sha256:<64 lowercase hex>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentSha256(pub [u8; 32]);

impl ContentSha256 {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        ContentSha256(sha256(bytes))
    }

    /// Parse the wire form; `None` unless it is `sha256:` + 64 lowercase hex.
    ///
    /// Branch-free per digit: hex digits are random, so a branch on digit
    /// versus letter mispredicts about every third byte, and every candidate
    /// frame's declared digest is parsed.
    pub fn parse(text: &str) -> Option<Self> {
        let hex = text.strip_prefix("sha256:")?.as_bytes();
        let hex: &[u8; 64] = hex.try_into().ok()?;
        let mut out = [0u8; 32];
        // Non-zero once any byte is not lowercase hex.
        let mut bad = 0u8;
        for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
            let (hi, hi_bad) = nibble(pair[0]);
            let (lo, lo_bad) = nibble(pair[1]);
            bad |= hi_bad | lo_bad;
            *byte = hi << 4 | lo;
        }
        (bad == 0).then_some(ContentSha256(out))
    }

    /// Whether `declared` is exactly this digest's wire form (one byte
    /// comparison against the formatted digest, no allocation).
    pub fn matches(&self, declared: &str) -> bool {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut wire = [0u8; 71];
        wire[..7].copy_from_slice(b"sha256:");
        for (pair, byte) in wire[7..].chunks_exact_mut(2).zip(self.0) {
            pair[0] = HEX[usize::from(byte >> 4)];
            pair[1] = HEX[usize::from(byte & 0x0f)];
        }
        declared.as_bytes() == wire
    }
}

/// The value of a lowercase hex digit and 0, or anything and a non-zero
/// flag, computed without branches.
#[inline]
fn nibble(b: u8) -> (u8, u8) {
    let digit = b.wrapping_sub(b'0');
    let letter = b.wrapping_sub(b'a');
    let is_digit = u8::from(digit < 10);
    let is_letter = u8::from(letter < 6);
    // Exactly one of the two holds for a hex digit, neither for anything else.
    let value = digit * is_digit + letter.wrapping_add(10) * is_letter;
    (value & 0x0f, (is_digit | is_letter) ^ 1)
}

impl fmt::Display for ContentSha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_sha256(&self.0))
    }
}

impl Serialize for ContentSha256 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ContentSha256 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ContentSha256::parse(&text).ok_or_else(|| {
            serde::de::Error::custom("expected sha256: followed by 64 lowercase hex digits")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_known_input_matches_the_published_vector() {
        assert_eq!(
            sha256_digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn parsing_accepts_exactly_lowercase_hex() {
        let d = ContentSha256::of(b"parse me");
        assert_eq!(ContentSha256::parse(&d.to_string()), Some(d));
        let all = ContentSha256(
            [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]
                .repeat(4)
                .try_into()
                .unwrap(),
        );
        assert_eq!(
            ContentSha256::parse(&format!("sha256:{}", "0123456789abcdef".repeat(4))),
            Some(all)
        );
        // Every byte value in every position of a digit pair: only 0-9 a-f parse.
        let wire = d.to_string();
        for b in 0..=255u8 {
            let hex = b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
            for at in [7, 8, 70] {
                let mut bytes = wire.clone().into_bytes();
                bytes[at] = b;
                let Ok(text) = String::from_utf8(bytes) else {
                    continue;
                };
                assert_eq!(
                    ContentSha256::parse(&text).is_some(),
                    hex,
                    "byte {b:#x} at {at}"
                );
            }
        }
        let multibyte = format!("sha256:é{}", &wire[9..]);
        assert_eq!(multibyte.len(), wire.len());
        for bad in [
            "",
            "sha256:",
            "sha256:00",
            &wire[..70],
            &format!("{wire}0"),
            &wire.to_uppercase(),
            &multibyte,
        ] {
            assert_eq!(ContentSha256::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn digests_compare_against_the_exact_wire_form_only() {
        let d = ContentSha256::of(b"hello");
        let wire = d.to_string();
        assert_eq!(wire, sha256_digest(b"hello"));
        assert!(d.matches(&wire));
        assert!(!d.matches(&wire.replace("sha256:", "SHA256:")));
        assert!(!d.matches(&format!("sha256:{}", wire[7..].to_uppercase())));
        assert!(!d.matches(&sha256_digest(b"hellO")));
        assert!(!d.matches(&wire[..70]));
        assert!(!d.matches("sha256:"));
    }
}
