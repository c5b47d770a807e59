//! SHA-256 as the composer uses it: digests are always recomputed from the
//! bytes in hand (D1, F5), never copied from what a provider declared.
//!
//! `sha2` picks the SHA-NI instructions at run time where the CPU has them
//! (its default `cpufeatures` detection), which is what keeps hashing every
//! candidate frame affordable; no `asm` feature is needed for that.

use contextgraph_types::digest::format_sha256;
use contextgraph_types::ContentHasher;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;

/// The raw SHA-256 of `bytes`. Dedup keys on these 32 bytes rather than the
/// 71-byte wire string so that grouping thousands of frames allocates nothing.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The wire form of the SHA-256 of `bytes`: `sha256:` + 64 lowercase hex (D1, F5).
pub fn sha256_digest(bytes: &[u8]) -> String {
    format_sha256(&sha256(bytes))
}

/// A [`ContentHasher`] backed by `sha2`, so that
/// [`ContextQueryResult::validate_with`](contextgraph_types::ContextQueryResult::validate_with)
/// recomputes content digests (D1) when a host audits an answer before composing it
/// (see [`ProviderOutcome::audited`](crate::ProviderOutcome::audited)).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sha256Hasher;

impl ContentHasher for Sha256Hasher {
    fn sha256_digest(&self, bytes: &[u8]) -> String {
        sha256_digest(bytes)
    }
}

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
    pub fn parse(text: &str) -> Option<Self> {
        let hex = text.strip_prefix("sha256:")?.as_bytes();
        if hex.len() != 64 {
            return None;
        }
        let nibble = |b: u8| match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            _ => None,
        };
        let mut out = [0u8; 32];
        for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
            *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
        }
        Some(ContentSha256(out))
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
