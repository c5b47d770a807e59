//! Hashing every candidate's content once: keyed fingerprints find repeats
//! (compared byte for byte before a digest is reused), the rest is hashed in
//! parallel chunks, with cache lines read ahead of the hasher.

use contextgraph_types::ContextFrame;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::dedup::{Candidate, Declared};
use crate::hash::ContentSha256;
use crate::keys::{Keyer, PassThrough};
use crate::parallel::Workers;

/// A cheap, keyed fingerprint of content: its length and its declared
/// digest, or, without a well-formed declaration, its first and last 16
/// bytes. Byte-identical contents declared alike share a fingerprint, which
/// is all the hashing pass needs to find repeats; it is a hint only, and
/// [`hash_contents`] compares the bytes before reusing a digest (a provider
/// declaring another frame's digest gains nothing but a failed comparison).
pub(super) fn fingerprint(text: &str, declared: &Declared, keyer: &Keyer) -> u64 {
    let bytes = text.as_bytes();
    match declared {
        // Honest providers declare digests: no need to touch the content yet.
        Declared::Digest(d) => keyer.hash_parts(bytes.len(), &d.0, &[]),
        _ => {
            let edge = bytes.len().min(16);
            keyer.hash_parts(bytes.len(), &bytes[..edge], &bytes[bytes.len() - edge..])
        }
    }
}

/// Set the SHA-256 of every inline candidate's content (rehydrated ones
/// were hashed already), computed in parallel chunks. Content
/// byte-identical to an earlier candidate's (same fingerprint, then compared
/// byte for byte, so nothing a provider declares is trusted) is not hashed
/// again: it gets that candidate's digest, which is the digest it would
/// have computed.
pub(super) fn hash_contents(
    candidates: &mut [Candidate<'_>],
    fingerprints: &[u64],
    workers: Workers,
) {
    // Each candidate is compared with the first one of its fingerprint at
    // most, so hostile look-alikes cost one comparison each, never more.
    let mut first: HashMap<u64, usize, BuildHasherDefault<PassThrough>> =
        HashMap::with_capacity_and_hasher(candidates.len(), Default::default());
    let mut same_as = vec![usize::MAX; candidates.len()];
    for (i, c) in candidates.iter().enumerate() {
        if matches!(c.body, Cow::Borrowed(_)) {
            let j = *first.entry(fingerprints[i]).or_insert(i);
            if j != i {
                same_as[i] = j;
            }
        }
    }
    drop(first);
    let shared: &[Candidate<'_>] = candidates;
    let hashed = workers.map_chunks(
        shared,
        |c| c.body.len(),
        |start, chunk| {
            let mut out: Vec<Hashed> = Vec::with_capacity(chunk.len());
            for (n, c) in chunk.iter().enumerate() {
                if let Some(next) = chunk.get(n + TOUCH_AHEAD) {
                    touch(next.body.as_bytes());
                    // A repeat is compared with its first occurrence, cold by now.
                    if let Some(first) = shared.get(same_as[start + n + TOUCH_AHEAD]) {
                        touch(first.body.as_bytes());
                    }
                }
                out.push(match c.body {
                    Cow::Owned(_) => Hashed::Already,
                    Cow::Borrowed(text) => {
                        let j = same_as[start + n];
                        if j != usize::MAX && shared[j].body.as_bytes() == text.as_bytes() {
                            Hashed::SameAs(j)
                        } else {
                            Hashed::Digest(ContentSha256::of(text.as_bytes()))
                        }
                    }
                });
            }
            out
        },
    );
    for (i, h) in hashed.into_iter().flatten().enumerate() {
        match h {
            Hashed::Already => {}
            Hashed::Digest(sha) => candidates[i].sha = sha,
            // `j` is the first candidate of its fingerprint, so it was hashed
            // itself, and it comes earlier.
            Hashed::SameAs(j) => candidates[i].sha = candidates[j].sha,
        }
    }
}

/// The hashing pass's result for one candidate.
enum Hashed {
    /// Rehydrated: hashed when checked against its canonical hash.
    Already,
    /// The SHA-256 of its content.
    Digest(ContentSha256),
    /// Byte-identical to this earlier candidate's content.
    SameAs(usize),
}

/// How many frames' metadata [`touch_metadata`] reads at once, one batch ahead.
pub(super) const TOUCH_BATCH: usize = 8;

/// How many frames ahead of the one being hashed [`touch`] reads.
const TOUCH_AHEAD: usize = 4;

/// Read one byte of every cache line of `bytes`. The reads are independent,
/// so the memory system fetches the lines in parallel while the previous
/// frame is being hashed, instead of one miss at a time once hashing reaches
/// them (a safe stand-in for a prefetch; content is cold in a large composition).
fn touch(bytes: &[u8]) {
    let sum = bytes
        .iter()
        .step_by(64)
        .fold(0u8, |acc, &b| acc.wrapping_add(b));
    std::hint::black_box(sum);
}

/// Read the first byte of each string of `frame` that building its
/// candidate reads (id, label, declared digest, `file` provenance). They
/// are separate heap blocks, cold in a large composition: reading them a
/// few frames ahead lets their cache misses overlap instead of being taken
/// one after the other while the frame is built.
pub(super) fn touch_metadata(frame: &ContextFrame) {
    let first = first_byte;
    let mut sum = first(&frame.id)
        .wrapping_add(frame.citation_label.as_deref().map_or(0, first))
        .wrapping_add(frame.content_digest.as_deref().map_or(0, first));
    for p in &frame.provenance {
        sum = sum
            .wrapping_add(first(&p.kind))
            .wrapping_add(p.uri.as_deref().map_or(0, first))
            .wrapping_add(p.range.as_deref().map_or(0, first));
    }
    std::hint::black_box(sum);
}

/// The first byte of `s` (0 if empty): reading it brings its cache line in.
pub(super) fn first_byte(s: &str) -> u8 {
    s.as_bytes().first().copied().unwrap_or(0)
}
