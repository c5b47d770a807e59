//! SHA-256 wire digests (F5, D1).
//!
//! `contextgraph-types` does no hashing (it depends on serde alone); this is
//! the one place the SDK hashes, so every frame builder, provenance helper and
//! the runner's honesty guard agree on the exact same function.

use contextgraph_types::digest::format_sha256;
use contextgraph_types::ContentHasher;
use sha2::{Digest, Sha256};

/// `sha256:` + 64 lowercase hex of `bytes`: the digest grammar of F5 and D1.
///
/// The bytes are hashed exactly as given: no newline, encoding or whitespace
/// normalization, because a host or the conformance suite re-hashes the same
/// bytes and must get the same answer.
pub fn sha256_digest(bytes: &[u8]) -> String {
    let raw: [u8; 32] = Sha256::digest(bytes).into();
    format_sha256(&raw)
}

/// The SHA-256 [`ContentHasher`] to plug into
/// `ContextFrame::validate_with` / `ContextQueryResult::validate_with`, so
/// validation recomputes content digests (D1) instead of only checking their
/// grammar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sha256Hasher;

impl ContentHasher for Sha256Hasher {
    fn sha256_digest(&self, bytes: &[u8]) -> String {
        sha256_digest(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors_d1() {
        assert_eq!(
            sha256_digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Sha256Hasher.sha256_digest(b"abc"), sha256_digest(b"abc"));
    }
}
