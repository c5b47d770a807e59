//! Digests the SDK computed while a provider answered, reused by the
//! runner's honesty guard when it meets the very same bytes again.
//!
//! Why: a frame built from a file excerpt had its content hashed twice in
//! one process, once when the provenance digest was made
//! ([`file_excerpt_of`](crate::file_excerpt_of), or [`FrameBuilder::build`](crate::FrameBuilder::build))
//! and once more when the runner's audit recomputed the frame's
//! `content_digest` (D1) before sending it (issue 29: a frame's bytes were
//! hashed about four times between the provider and the host).
//!
//! Why it stays honest: the audit never takes a digest on the provider's
//! word. While the runner's [`Scope`] is open on a thread, each digest the
//! SDK's own code computes on that thread is recorded with a copy of the
//! bytes it was computed over; the audit's [`MemoHasher`] answers a digest
//! from the record only when the bytes it is asked about are *equal* to the
//! recorded ones (compared byte for byte, a memory-speed pass), and hashes
//! them otherwise. A provider that changed a frame's content after its
//! digest was made gets a fresh hash, exactly as before. Nothing crosses a
//! process or peer boundary: a host still verifies every frame it receives.

use std::cell::RefCell;
use std::collections::HashMap;

use contextgraph_types::validate::ContentHasher;

use crate::digest::sha256_digest;

/// Most bytes one scope keeps copies of: past this, digests are still
/// computed (and the audit hashes for itself), only no longer recorded. A
/// search answer records a few hundred kilobytes.
const MAX_RECORDED_BYTES: usize = 16 << 20;

/// Bytes a digest was computed over, and that digest.
type Recorded = (Box<[u8]>, String);

/// The digests recorded during one scope, by the length of their bytes.
#[derive(Default)]
struct Memo {
    by_len: HashMap<usize, Vec<Recorded>>,
    recorded: usize,
}

impl Memo {
    fn record(&mut self, bytes: &[u8], digest: &str) {
        if self.recorded + bytes.len() > MAX_RECORDED_BYTES {
            return;
        }
        let same_len = self.by_len.entry(bytes.len()).or_default();
        if same_len.iter().any(|(b, _)| **b == *bytes) {
            return;
        }
        self.recorded += bytes.len();
        same_len.push((bytes.into(), digest.to_owned()));
    }

    fn find(&self, bytes: &[u8]) -> Option<&str> {
        self.by_len
            .get(&bytes.len())?
            .iter()
            .find(|(b, _)| **b == *bytes)
            .map(|(_, d)| d.as_str())
    }
}

thread_local! {
    /// This thread's open scope's record (`None`: no scope, nothing kept).
    static MEMO: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// `sha256_digest(bytes)`, recorded for this thread's open [`Scope`] if
/// there is one. Every digest the SDK computes over content goes through
/// here.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let d = sha256_digest(bytes);
    MEMO.with(|m| {
        if let Some(memo) = m.borrow_mut().as_mut() {
            memo.record(bytes, &d);
        }
    });
    d
}

/// While alive, digests computed on this thread are recorded for the audit
/// (see the [module documentation](self)); dropped, the record is freed and
/// the thread's previous scope, if any, is back.
pub(crate) struct Scope {
    previous: Option<Memo>,
}

impl Scope {
    /// Open a scope on this thread.
    pub(crate) fn open() -> Scope {
        let previous = MEMO.with(|m| m.borrow_mut().replace(Memo::default()));
        Scope { previous }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let previous = self.previous.take();
        MEMO.with(|m| *m.borrow_mut() = previous);
    }
}

/// The audit's hasher: the recorded digest of bytes equal to the ones
/// asked about, else their SHA-256 computed now. Only meaningful while a
/// [`Scope`] is open on the calling thread (without one it always hashes).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MemoHasher;

impl ContentHasher for MemoHasher {
    fn sha256_digest(&self, bytes: &[u8]) -> String {
        let known = MEMO.with(|m| {
            m.borrow()
                .as_ref()
                .and_then(|memo| memo.find(bytes).map(str::to_owned))
        });
        known.unwrap_or_else(|| sha256_digest(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The audit's hasher gives the SHA-256 of what it is asked about in
    /// every case: bytes recorded in the scope, bytes of the same length
    /// that differ (a content changed after its digest was made), bytes
    /// never recorded, and anything once the scope is closed.
    #[test]
    fn the_memo_hasher_is_sha256_whatever_was_recorded() {
        let inputs: [&[u8]; 5] = [
            b"",
            b"fn main() {}\n",
            b"fn main() {}!\n",
            b"x",
            b"fn main() {}\n",
        ];
        let scope = Scope::open();
        for b in &inputs[..2] {
            assert_eq!(digest(b), sha256_digest(b));
        }
        for b in inputs {
            assert_eq!(MemoHasher.sha256_digest(b), sha256_digest(b), "{b:?}");
        }
        // A recorded digest is what answers for equal bytes.
        assert_eq!(
            MEMO.with(|m| m
                .borrow()
                .as_ref()
                .and_then(|memo| memo.find(inputs[1]).map(str::to_owned))),
            Some(sha256_digest(inputs[1]))
        );
        drop(scope);
        assert!(MEMO.with(|m| m.borrow().is_none()));
        for b in inputs {
            assert_eq!(MemoHasher.sha256_digest(b), sha256_digest(b));
        }
    }

    /// Scopes nest: an inner scope's record is its own, and closing it
    /// gives the outer one back; without a scope nothing is kept.
    #[test]
    fn scopes_nest_and_nothing_is_kept_outside_one() {
        let _ = digest(b"outside");
        assert!(MEMO.with(|m| m.borrow().is_none()));
        let outer = Scope::open();
        let _ = digest(b"outer");
        {
            let _inner = Scope::open();
            let _ = digest(b"inner");
            MEMO.with(|m| {
                let m = m.borrow();
                let memo = m.as_ref().expect("a scope is open");
                assert!(memo.find(b"inner").is_some() && memo.find(b"outer").is_none());
            });
        }
        MEMO.with(|m| {
            let m = m.borrow();
            let memo = m.as_ref().expect("the outer scope is back");
            assert!(memo.find(b"outer").is_some() && memo.find(b"inner").is_none());
        });
        drop(outer);
    }

    /// Past the cap, digests are no longer recorded (and the audit hashes).
    #[test]
    fn the_record_is_bounded() {
        let _scope = Scope::open();
        let big = vec![b'a'; MAX_RECORDED_BYTES];
        let _ = digest(&big);
        let _ = digest(b"one more");
        MEMO.with(|m| {
            let m = m.borrow();
            let memo = m.as_ref().expect("a scope is open");
            assert!(memo.find(&big).is_some());
            assert!(memo.find(b"one more").is_none());
        });
        assert_eq!(
            MemoHasher.sha256_digest(b"one more"),
            sha256_digest(b"one more")
        );
    }
}
