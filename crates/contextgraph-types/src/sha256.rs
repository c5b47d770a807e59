//! SHA-256 wire digests (F5, D1): the workspace's one hasher. Pure (no
//! I/O), so it lives beside the [`ContentHasher`] trait it implements and
//! the digest grammar it produces; the SDK, the host and the composer all
//! use it, so every frame builder, honesty guard and audit agrees on the
//! exact same function.
//!
//! `sha2` picks the SHA-NI instructions at run time where the CPU has them
//! (its default `cpufeatures` detection), which keeps hashing every
//! candidate frame affordable.

use sha2::{Digest, Sha256};

use crate::digest::format_sha256;
use crate::validate::ContentHasher;

/// The raw SHA-256 of `bytes`. Dedup keys on these 32 bytes rather than the
/// 71-byte wire string so that grouping thousands of frames allocates nothing.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `sha256:` + 64 lowercase hex of `bytes`: the digest grammar of F5 and D1.
///
/// The bytes are hashed exactly as given: no newline, encoding or whitespace
/// normalization, because a host or the conformance suite re-hashes the same
/// bytes and must get the same answer.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format_sha256(&sha256(bytes))
}

/// The SHA-256 [`ContentHasher`] to plug into
/// `ContextFrame::validate_with` / `ContextQueryResult::validate_with`, so
/// validation recomputes content digests (D1) instead of only checking their
/// grammar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
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
        assert_eq!(format_sha256(&sha256(b"abc")), sha256_digest(b"abc"));
    }
}
