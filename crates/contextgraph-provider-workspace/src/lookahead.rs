//! Frames built ahead of the packing walk, on the answer's second core.
//!
//! Why: once the ranking is done, an answer builds its frames one at a time
//! in rank order (`WorkspaceProvider::select`); each costs a file read, the
//! region's digest (the freshness check) and its relations. By then the
//! semantic pass has finished and the second core is idle: on a 16,000-file
//! tree the frames were the last serial stretch of an answer. A lookahead
//! thread builds, in the walk's order, the candidates the walk is expected to
//! ask for, while the walk builds what it reaches first; each planned
//! candidate is built once, by whichever thread claims it first, and the walk
//! takes the other thread's result when it gets there.
//!
//! What is served does not change: the walk still decides what to build, in
//! which order, and what to skip; only which thread builds a frame does, and
//! a frame is a function of its candidate and the file's bytes. A candidate
//! the lookahead built but the walk never asks for is dropped. If a build
//! panics on the lookahead thread, the walk builds that candidate itself
//! (and the lookahead stops), so a panic surfaces where it did before.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Fewer planned builds than this are done on the walk's thread alone: a
/// thread costs tens of microseconds to start, about what two builds cost.
pub(crate) const MIN_PLANNED: usize = 4;

/// One planned candidate's state.
enum Cell<T> {
    /// Nobody has started it.
    Free,
    /// A thread is building it.
    Claimed,
    /// The lookahead built it; the walk has not taken it yet.
    Built(T),
    /// Taken by the walk, or abandoned by a lookahead build that panicked
    /// (the walk then builds it).
    Gone,
}

/// The shared state of one walk and its lookahead.
struct Shared<T> {
    cells: Mutex<Vec<Cell<T>>>,
    built: Condvar,
    /// Set when the walk has finished (or the lookahead gave up).
    stop: AtomicBool,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Vec<Cell<T>>> {
        // A poisoned lock means a thread panicked between two cell updates,
        // which never leave a cell half-written: the cells are still valid.
        self.cells.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The walk's side: [`Walk::build`] each candidate it needs.
pub(crate) struct Walk<'s, T> {
    /// Planned candidates, ascending (the walk's order).
    plan: &'s [usize],
    shared: Option<&'s Shared<T>>,
}

impl<T> Walk<'_, T> {
    /// Candidate `k`'s result: the lookahead's if it built (or is
    /// building) it, else `here()`, run on the walk's thread.
    pub(crate) fn build(&self, k: usize, here: impl FnOnce() -> T) -> T {
        let (Some(shared), Ok(at)) = (self.shared, self.plan.binary_search(&k)) else {
            return here();
        };
        let mut cells = shared.lock();
        loop {
            match std::mem::replace(&mut cells[at], Cell::Gone) {
                Cell::Free | Cell::Gone => {
                    drop(cells);
                    return here();
                }
                Cell::Built(value) => return value,
                Cell::Claimed => {
                    cells[at] = Cell::Claimed;
                    cells = shared.built.wait(cells).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
    }
}

/// Run `walk`, with a lookahead thread building the candidates of `plan`
/// (positions in the walk's order, ascending) through `build` in a context
/// of its own from `context` (the walk's thread keeps its own). Without a
/// plan of at least [`MIN_PLANNED`] candidates no thread is started.
pub(crate) fn with_lookahead<T, C, R>(
    plan: &[usize],
    context: impl FnOnce() -> C + Send,
    build: &(dyn Fn(usize, &mut C) -> T + Sync),
    walk: impl FnOnce(&Walk<'_, T>) -> R,
) -> R
where
    T: Send,
{
    debug_assert!(plan.windows(2).all(|w| w[0] < w[1]), "plan not ascending");
    if plan.len() < MIN_PLANNED {
        return walk(&Walk { plan, shared: None });
    }
    let shared = Shared {
        cells: Mutex::new(plan.iter().map(|_| Cell::Free).collect()),
        built: Condvar::new(),
        stop: AtomicBool::new(false),
    };
    std::thread::scope(|scope| {
        let shared = &shared;
        scope.spawn(move || {
            let mut context = context();
            for (at, &k) in plan.iter().enumerate() {
                if shared.stop.load(Ordering::Relaxed) {
                    break;
                }
                {
                    let mut cells = shared.lock();
                    if !matches!(cells[at], Cell::Free) {
                        continue;
                    }
                    cells[at] = Cell::Claimed;
                }
                let result = catch_unwind(AssertUnwindSafe(|| build(k, &mut context)));
                let mut cells = shared.lock();
                match result {
                    Ok(value) => cells[at] = Cell::Built(value),
                    Err(_) => {
                        cells[at] = Cell::Gone;
                        shared.stop.store(true, Ordering::Relaxed);
                    }
                }
                drop(cells);
                shared.built.notify_all();
            }
        });
        let out = walk(&Walk {
            plan,
            shared: Some(shared),
        });
        shared.stop.store(true, Ordering::Relaxed);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A walk over `0..n` asking for `asked` (ascending), building `k * 10`.
    fn run(n: usize, plan: &[usize], asked: &[usize], builds: &AtomicUsize) -> Vec<usize> {
        let build = |k: usize, _: &mut ()| {
            builds.fetch_add(1, Ordering::SeqCst);
            k * 10
        };
        with_lookahead(
            plan,
            || (),
            &build,
            |walk| {
                (0..n)
                    .filter(|k| asked.contains(k))
                    .map(|k| walk.build(k, || build(k, &mut ())))
                    .collect()
            },
        )
    }

    #[test]
    fn the_walk_gets_every_result_it_asks_for_in_its_order() {
        for plan in [
            vec![],
            vec![1, 2],
            (0..40).collect(),
            (0..40).step_by(3).collect(),
        ] {
            for asked in [vec![], (0..40).collect(), (5..40).step_by(2).collect()] {
                let builds = AtomicUsize::new(0);
                let got = run(40, &plan, &asked, &builds);
                let want: Vec<usize> = asked.iter().map(|k| k * 10).collect();
                assert_eq!(got, want, "plan {plan:?}, asked {asked:?}");
                // Each asked candidate built at least once; the lookahead
                // builds at most the plan besides.
                let n = builds.load(Ordering::SeqCst);
                assert!(n >= asked.len(), "{n} builds for {}", asked.len());
                assert!(n <= asked.len() + plan.len(), "{n} builds");
            }
        }
    }

    #[test]
    fn a_planned_candidate_is_built_once_whichever_thread_claims_it() {
        let plan: Vec<usize> = (0..64).collect();
        let builds = AtomicUsize::new(0);
        let got = run(64, &plan, &plan, &builds);
        assert_eq!(got, (0..64).map(|k| k * 10).collect::<Vec<_>>());
        assert_eq!(builds.load(Ordering::SeqCst), 64);
    }

    #[test]
    fn the_walk_waits_for_a_build_the_lookahead_holds() {
        // The lookahead claims candidate 0 first (the walk is held back
        // until it has), and takes a while: the walk must get its result,
        // not build it again.
        let plan: Vec<usize> = (0..8).collect();
        let claimed = (Mutex::new(false), Condvar::new());
        let builds = AtomicUsize::new(0);
        let build = |k: usize, on_lookahead: &mut bool| {
            builds.fetch_add(1, Ordering::SeqCst);
            if *on_lookahead && k == 0 {
                *claimed.0.lock().expect("lock") = true;
                claimed.1.notify_all();
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
            k + 100
        };
        let got = with_lookahead(
            &plan,
            || true,
            &build,
            |walk| {
                let mut held = claimed.0.lock().expect("lock");
                while !*held {
                    held = claimed.1.wait(held).expect("wait");
                }
                drop(held);
                walk.build(0, || build(0, &mut false))
            },
        );
        assert_eq!(got, 100);
        // Candidate 0 once (by the lookahead); the lookahead may have built
        // more of the plan before it saw the stop.
        assert!(builds.load(Ordering::SeqCst) <= plan.len());
    }

    #[test]
    fn a_lookahead_build_that_panics_is_built_by_the_walk() {
        let plan: Vec<usize> = (0..8).collect();
        let build = |k: usize, on_lookahead: &mut bool| {
            if *on_lookahead && k == 2 {
                panic!("lookahead build of 2");
            }
            k
        };
        let got: Vec<usize> = with_lookahead(
            &plan,
            || true,
            &build,
            |walk| {
                (0..8)
                    .map(|k| walk.build(k, || build(k, &mut false)))
                    .collect()
            },
        );
        assert_eq!(got, (0..8).collect::<Vec<_>>());
    }
}
