//! Deterministic data parallelism for the per-frame passes (building
//! candidates, hashing content).
//!
//! Work is split into contiguous chunks of roughly equal weight (bytes to
//! read), a few per thread, which the threads (the calling one included)
//! claim in turn; the chunk results are returned in chunk order. On a busy
//! host a spawned thread may start late or not at all for a while: the
//! others, the caller last, take the chunks it has not claimed, so nobody
//! waits for a thread that is not running. Every item is processed by a pure
//! function of the item, so the concatenated result is the same for any
//! number of threads, any split and any claiming order: the composition never
//! depends on how many cores the host has.
//!
//! Plain `std::thread::scope`, no pool: a composition is a few milliseconds
//! of work and spawning one thread costs tens of microseconds. A thread the
//! OS refuses to create is not an error: its chunk runs on the calling thread.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;

/// Below this much weight (bytes), a pass runs on the calling thread: the
/// work would not pay for spawning a thread.
pub(crate) const PARALLEL_THRESHOLD: usize = 256 * 1024;

/// The most threads the automatic setting uses: beyond that, the passes are
/// bound by memory bandwidth, not by cores.
pub(crate) const MAX_AUTO_THREADS: usize = 8;

/// Chunks per thread: enough that a late thread's share is picked up by
/// the others in small pieces, few enough that merging them costs nothing.
pub(crate) const CHUNKS_PER_THREAD: usize = 4;

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
        let pieces = if self.threads <= 1 {
            1
        } else {
            self.threads.saturating_mul(CHUNKS_PER_THREAD)
        };
        let bounds = split(items, pieces, weight);
        let chunks = bounds.len() - 1;
        if chunks <= 1 {
            return vec![f(0, items)];
        }
        let chunk = |k: usize| (bounds[k], &items[bounds[k]..bounds[k + 1]]);
        let next = AtomicUsize::new(0);
        let done: Vec<Mutex<Option<R>>> = (0..chunks).map(|_| Mutex::new(None)).collect();
        // Claim chunks until none is left.
        let work = || loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= chunks {
                break;
            }
            let (start, items) = chunk(k);
            let r = f(start, items);
            *done[k].lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        };
        thread::scope(|scope| {
            let work = &work;
            let mut handles = Vec::with_capacity(self.threads - 1);
            for _ in 1..self.threads.min(chunks) {
                let spawned = thread::Builder::new()
                    .name("cgp-compose".to_owned())
                    .spawn_scoped(scope, work);
                match spawned {
                    Ok(handle) => handles.push(handle),
                    // No thread to be had: the ones running take its chunks.
                    Err(_) => break,
                }
            }
            work();
            for handle in handles {
                // The passes do not panic on any input; if a bug does, it
                // surfaces on the caller's thread as it would have there.
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
        done.into_iter()
            .enumerate()
            .map(|(k, slot)| {
                let r = slot.into_inner().unwrap_or_else(PoisonError::into_inner);
                // Every chunk was claimed and run above; should one not
                // have been, run it here rather than lose it.
                r.unwrap_or_else(|| {
                    let (start, items) = chunk(k);
                    f(start, items)
                })
            })
            .collect()
    }
}

/// Chunk boundaries `[0, b1, …, items.len()]`: at most `pieces` non-empty
/// chunks of about equal weight; a single chunk when the total weight is
/// under [`PARALLEL_THRESHOLD`].
fn split<T>(items: &[T], pieces: usize, weight: impl Fn(&T) -> usize) -> Vec<usize> {
    let weights: Vec<usize> = items.iter().map(|t| weight(t).max(1)).collect();
    let total: usize = weights.iter().fold(0usize, |a, &w| a.saturating_add(w));
    if pieces <= 1 || items.len() < 2 || total < PARALLEL_THRESHOLD {
        return vec![0, items.len()];
    }
    let chunks = pieces.min(items.len());
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
    fn threads_share_a_few_chunks_each_and_results_keep_chunk_order() {
        let items: Vec<usize> = (0..1000).collect();
        let starts = workers(2).map_chunks(&items, |_| 4096, |start, _| start);
        assert_eq!(starts.len(), 2 * CHUNKS_PER_THREAD);
        assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
        // Whichever thread ran a chunk, it saw only its own items.
        let sums = workers(3).map_chunks(&items, |_| 4096, |_, chunk| chunk.iter().sum::<usize>());
        assert_eq!(sums.len(), 3 * CHUNKS_PER_THREAD);
        assert_eq!(sums.iter().sum::<usize>(), items.iter().sum::<usize>());
        assert_eq!(
            workers(1).map_chunks(&items, |_| 4096, |_, c| c.len()),
            [1000]
        );
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
