//! Deterministic data parallelism for the per-frame passes (building
//! candidates, hashing content).
//!
//! Work is split into contiguous chunks of roughly equal weight (bytes to
//! read), one per thread, and the chunk results are returned in chunk
//! order. Every item is processed by a pure function of the item, so the
//! concatenated result is the same for any number of threads and any split:
//! the composition never depends on how many cores the host has.
//!
//! Plain `std::thread::scope`, no pool: a composition is a few milliseconds
//! of work and spawning one thread costs tens of microseconds. A thread the
//! OS refuses to create is not an error: its chunk runs on the calling thread.

use std::num::NonZeroUsize;
use std::thread;

/// Below this much weight (bytes), a pass runs on the calling thread: the
/// work would not pay for spawning a thread.
pub(crate) const PARALLEL_THRESHOLD: usize = 256 * 1024;

/// The most threads the automatic setting uses: beyond that, the passes are
/// bound by memory bandwidth, not by cores.
pub(crate) const MAX_AUTO_THREADS: usize = 8;

/// How many threads a pass may use.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Workers {
    threads: usize,
}

impl Workers {
    /// `requested` threads, or (None) what the machine offers, at most
    /// [`MAX_AUTO_THREADS`].
    pub fn new(requested: Option<NonZeroUsize>) -> Self {
        let threads = match requested {
            Some(n) => n.get(),
            None => thread::available_parallelism()
                .map_or(1, NonZeroUsize::get)
                .min(MAX_AUTO_THREADS),
        };
        Workers { threads }
    }

    /// Run `f` over contiguous chunks of `items` and return the chunk results
    /// in order. `f` receives the index of the chunk's first item and the
    /// chunk. Chunks have about the same total `weight`; with one thread, or
    /// less than [`PARALLEL_THRESHOLD`] of weight in all, there is one chunk.
    pub fn map_chunks<T, R, W, F>(&self, items: &[T], weight: W, f: F) -> Vec<R>
    where
        T: Sync,
        R: Send,
        W: Fn(&T) -> usize,
        F: Fn(usize, &[T]) -> R + Sync,
    {
        let bounds = split(items, self.threads, weight);
        if bounds.len() <= 2 {
            return vec![f(0, items)];
        }
        let f = &f;
        thread::scope(|scope| {
            let mut pending = Vec::with_capacity(bounds.len() - 1);
            // Chunk 0 runs here, after the others have been handed out.
            for w in bounds.windows(2).skip(1) {
                let (start, end) = (w[0], w[1]);
                let chunk = &items[start..end];
                let spawned = thread::Builder::new()
                    .name("cgp-compose".to_owned())
                    .spawn_scoped(scope, move || f(start, chunk));
                pending.push(match spawned {
                    Ok(handle) => Err(handle),
                    // No thread to be had: do it here, in order all the same.
                    Err(_) => Ok(f(start, chunk)),
                });
            }
            let mut out = Vec::with_capacity(bounds.len() - 1);
            out.push(f(0, &items[..bounds[1]]));
            for p in pending {
                out.push(match p {
                    Ok(done) => done,
                    Err(handle) => match handle.join() {
                        Ok(r) => r,
                        // The passes do not panic on any input; if a bug does,
                        // it surfaces on the caller's thread as it would have there.
                        Err(panic) => std::panic::resume_unwind(panic),
                    },
                });
            }
            out
        })
    }
}

/// Chunk boundaries `[0, b1, …, items.len()]`: at most `threads` non-empty
/// chunks of about equal weight; a single chunk when the total weight is
/// under [`PARALLEL_THRESHOLD`].
fn split<T>(items: &[T], threads: usize, weight: impl Fn(&T) -> usize) -> Vec<usize> {
    let weights: Vec<usize> = items.iter().map(|t| weight(t).max(1)).collect();
    let total: usize = weights.iter().fold(0usize, |a, &w| a.saturating_add(w));
    if threads <= 1 || items.len() < 2 || total < PARALLEL_THRESHOLD {
        return vec![0, items.len()];
    }
    let chunks = threads.min(items.len());
    let mut bounds = Vec::with_capacity(chunks + 1);
    bounds.push(0);
    let mut acc = 0usize;
    let mut next = 1;
    for (i, &w) in weights.iter().enumerate() {
        acc = acc.saturating_add(w);
        // Chunk `next` ends once it holds its share of the total (u128: no overflow).
        let target = (total as u128 * next as u128 / chunks as u128) as usize;
        if next < chunks && acc >= target && i + 1 < items.len() {
            bounds.push(i + 1);
            next += 1;
        }
    }
    bounds.push(items.len());
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workers(n: usize) -> Workers {
        Workers::new(NonZeroUsize::new(n))
    }

    #[test]
    fn chunks_cover_every_item_once_in_order() {
        let items: Vec<usize> = (0..1000).collect();
        for threads in [1, 2, 3, 7, 64] {
            let chunks = workers(threads).map_chunks(
                &items,
                |_| 4096,
                |start, chunk| {
                    assert_eq!(chunk.first().copied(), Some(start));
                    chunk.to_vec()
                },
            );
            let flat: Vec<usize> = chunks.into_iter().flatten().collect();
            assert_eq!(flat, items, "threads = {threads}");
        }
    }

    #[test]
    fn chunks_balance_weight_and_small_work_stays_on_one_thread() {
        let items: Vec<usize> = (0..100).collect();
        let bounds = split(&items, 4, |_| PARALLEL_THRESHOLD);
        assert_eq!(bounds, vec![0, 25, 50, 75, 100]);
        // One heavy item at the front gets a chunk of its own.
        let bounds = split(&items, 2, |&i| if i == 0 { 1 << 30 } else { 1 });
        assert_eq!(bounds, vec![0, 1, 100]);
        assert_eq!(split(&items, 8, |_| 1), vec![0, 100]);
        assert_eq!(split(&items[..1], 8, |_| 1 << 30), vec![0, 1]);
        assert_eq!(split::<usize>(&[], 8, |_| 1 << 30), vec![0, 0]);
    }
}
