//! Instruments for observing how a runner schedules a provider's calls.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::PATIENCE;

/// Counts calls currently inside the provider and remembers the peak.
#[derive(Default)]
pub struct Occupancy {
    state: Mutex<(usize, usize)>,
    changed: Condvar,
}

impl Occupancy {
    pub fn enter(&self) {
        let mut s = self.state.lock().unwrap();
        s.0 += 1;
        s.1 = s.1.max(s.0);
        self.changed.notify_all();
    }

    pub fn leave(&self) {
        let mut s = self.state.lock().unwrap();
        s.0 -= 1;
        self.changed.notify_all();
    }

    /// The most calls that were inside at once.
    pub fn peak(&self) -> usize {
        self.state.lock().unwrap().1
    }

    /// Wait (at most [`PATIENCE`]) until `n` calls have been inside at
    /// once (the peak, so a waiter woken after others left still sees it);
    /// false if that never happened.
    pub fn wait_for(&self, n: usize) -> bool {
        let guard = self.state.lock().unwrap();
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, PATIENCE, |s| s.1 < n)
            .unwrap();
        guard.1 >= n
    }
}

/// A small deterministic pseudo-random delay (0–`max_ms` ms) derived from
/// `seed`, so replies come back in an order unrelated to the requests'.
pub fn jitter(seed: &str, max_ms: u64) -> Duration {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for b in seed.bytes() {
        x ^= u64::from(b);
        x = x.wrapping_mul(0x100_0000_01b3);
        x ^= x >> 29;
    }
    Duration::from_millis(x % (max_ms + 1))
}
