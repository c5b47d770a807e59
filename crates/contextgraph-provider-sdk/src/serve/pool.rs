//! Bounded concurrency for correlated providers: an in-flight limit the
//! reader waits on (backpressure) and a lazily grown pool of worker threads.
//!
//! Workers are ordinary (not scoped) threads so that the runner can return
//! after the bounded shutdown grace even when a provider's `query` never
//! does; a straggler finishes on its own and its late reply is discarded.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Instant;

use super::session::{Job, Session};
use super::writer::{encode, SharedOutput};
use crate::provider::Provider;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing runs provider code while holding these locks, so a poisoned
    // lock only means a thread died between two plain assignments.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counts requests taken from the input but not yet answered.
#[derive(Debug)]
pub(crate) struct InFlight {
    count: Mutex<usize>,
    changed: Condvar,
    max: usize,
}

impl InFlight {
    pub(crate) fn new(max: usize) -> Self {
        InFlight {
            count: Mutex::new(0),
            changed: Condvar::new(),
            max: max.max(1),
        }
    }

    /// Take a slot, waiting while `max` requests are outstanding. The
    /// reader calls this before accepting more work, so a full pool stops
    /// reading instead of queueing without bound.
    pub(crate) fn acquire(&self) {
        let mut count = lock(&self.count);
        while *count >= self.max {
            count = self
                .changed
                .wait(count)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *count += 1;
    }

    pub(crate) fn release(&self) {
        let mut count = lock(&self.count);
        *count = count.saturating_sub(1);
        self.changed.notify_all();
    }

    /// Wait until nothing is outstanding or `deadline` passes; returns how
    /// many requests are still outstanding.
    pub(crate) fn wait_idle(&self, deadline: Instant) -> usize {
        let mut count = lock(&self.count);
        while *count > 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            count = self
                .changed
                .wait_timeout(count, deadline - now)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        *count
    }
}

struct State {
    queue: VecDeque<Job>,
    idle: usize,
    workers: usize,
    closed: bool,
}

struct Shared<P> {
    session: Arc<Session<P>>,
    out: Arc<SharedOutput>,
    in_flight: Arc<InFlight>,
    state: Mutex<State>,
    ready: Condvar,
    max_workers: usize,
}

/// Runs jobs on up to `max_workers` threads, spawned only when every
/// existing worker is busy.
pub(crate) struct Pool<P> {
    shared: Arc<Shared<P>>,
}

impl<P: Provider> Pool<P> {
    pub(crate) fn new(
        session: Arc<Session<P>>,
        out: Arc<SharedOutput>,
        in_flight: Arc<InFlight>,
        max_workers: usize,
    ) -> Self {
        Pool {
            shared: Arc::new(Shared {
                session,
                out,
                in_flight,
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    idle: 0,
                    workers: 0,
                    closed: false,
                }),
                ready: Condvar::new(),
                max_workers: max_workers.max(1),
            }),
        }
    }

    /// Queue a job whose in-flight slot the caller already holds. If no
    /// worker exists and none can be spawned, the job is run right here
    /// rather than lost.
    pub(crate) fn submit(&self, job: Job) {
        let inline = {
            let mut state = lock(&self.shared.state);
            state.queue.push_back(job);
            if state.queue.len() > state.idle && state.workers < self.shared.max_workers {
                let shared = Arc::clone(&self.shared);
                match thread::Builder::new()
                    .name("cgp-worker".to_owned())
                    .spawn(move || worker(&shared))
                {
                    Ok(_) => state.workers += 1,
                    Err(e) => diag!("contextgraph-provider-sdk: cannot spawn a worker thread: {e}"),
                }
            }
            self.shared.ready.notify_one();
            if state.workers == 0 {
                state.queue.pop_front()
            } else {
                None
            }
        };
        if let Some(job) = inline {
            complete(&self.shared, job);
        }
    }

    /// No more jobs will come: workers finish the queue and exit.
    pub(crate) fn close(&self) {
        lock(&self.shared.state).closed = true;
        self.shared.ready.notify_all();
    }
}

fn worker<P: Provider>(shared: &Shared<P>) {
    let mut state = lock(&shared.state);
    loop {
        if let Some(job) = state.queue.pop_front() {
            drop(state);
            complete(shared, job);
            state = lock(&shared.state);
        } else if state.closed {
            state.workers -= 1;
            return;
        } else {
            state.idle += 1;
            state = shared
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.idle -= 1;
        }
    }
}

/// Run, write the reply, then free the slot — in that order, so "nothing in
/// flight" means every reply is already written.
fn complete<P: Provider>(shared: &Shared<P>, job: Job) {
    let reply = shared.session.run(job);
    // A failed send means the output is gone (or the runner returned after
    // its grace); the reply has nowhere to go.
    let _ = shared.out.send(&encode(&reply));
    shared.in_flight.release();
}
