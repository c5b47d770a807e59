//! Strings hashed once, while they are in cache.
//!
//! Composition walks thousands of frames whose strings (labels, URIs) live
//! scattered on the heap; hashing each one when its frame is first visited,
//! and keying maps by that hash, keeps later passes from chasing cold
//! pointers. The hash is SipHash with per-composition random keys (a provider
//! cannot aim its strings at one bucket), and nothing ever iterates a map, so
//! the output does not depend on the keys.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};

/// A string and its precomputed hash.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keyed<'a> {
    /// The hash of `text` under the composition's [`Keyer`].
    pub hash: u64,
    /// The string.
    pub text: &'a str,
}

impl PartialEq for Keyed<'_> {
    fn eq(&self, other: &Self) -> bool {
        // The same slice is the same text: looking a key up with itself (as
        // label disambiguation does for every label) reads no cold bytes.
        self.hash == other.hash && (std::ptr::eq(self.text, other.text) || self.text == other.text)
    }
}

impl Eq for Keyed<'_> {}

impl Hash for Keyed<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// Hashes strings for one composition.
pub(crate) struct Keyer(RandomState);

impl Keyer {
    pub fn new() -> Self {
        Keyer(RandomState::new())
    }

    pub fn key<'a>(&self, text: &'a str) -> Keyed<'a> {
        Keyed {
            hash: self.0.hash_one(text),
            text,
        }
    }

    /// The hash of a length and two byte strings (a content fingerprint).
    pub fn hash_parts(&self, len: usize, head: &[u8], tail: &[u8]) -> u64 {
        let mut h = self.0.build_hasher();
        h.write_usize(len);
        h.write(head);
        h.write(tail);
        h.finish()
    }
}

/// A map keyed by [`Keyed`] strings, using their precomputed hash as is.
pub(crate) type KeyedMap<'a, V> = HashMap<Keyed<'a>, V, BuildHasherDefault<PassThrough>>;

/// The hasher of [`KeyedMap`]: the key's hash is already uniform.
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn write(&mut self, bytes: &[u8]) {
        // Only reached for keys other than `Keyed`, which this map never holds.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
