//! How far an index build is, for a server that answers while it runs.
//!
//! A cold index of a large repository takes minutes. A server (the MCP
//! server behind `cgp mcp`) answers its client at once and builds in the
//! background; [`IndexBuild`] is the handle both sides share: the build
//! counts the files it has to read and has read, the server reads a
//! [`BuildSnapshot`] to tell its client how far indexing is (and how long
//! it will take), and cancels the build when its client is gone.
//!
//! Cancelling stops reading files as a refresh deadline does: what was read
//! is kept and persisted, and the files not reached are read by the next
//! refresh, so an interrupted cold build resumes instead of starting over.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A hook that keeps the build from reading files while it returns `true`.
type Hold = Box<dyn Fn() -> bool + Send + Sync>;

#[derive(Default)]
struct Inner {
    /// Walks (listing the tree) in progress.
    walking: AtomicUsize,
    /// Files the builds sharing this handle have to read.
    files_total: AtomicU64,
    /// Files they have read.
    files_done: AtomicU64,
    cancelled: AtomicBool,
    /// The last step begun after reading ([`Step`] as a number).
    step: AtomicU8,
    started: Mutex<Option<Instant>>,
    hold: Mutex<Option<Hold>>,
}

/// A shared handle on one or more index builds (see the module docs).
/// Cloning it shares it; [`WorkspaceOptions::build`](crate::WorkspaceOptions::build)
/// hands it to a workspace.
#[derive(Clone, Default)]
pub struct IndexBuild {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for IndexBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexBuild")
            .field("snapshot", &self.snapshot())
            .finish_non_exhaustive()
    }
}

/// What a build does once its files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Listing or reading files (see the counts).
    Reading,
    /// Writing the index to the cache.
    Saving,
    /// Computing the semantic vectors of the chunks.
    Embedding,
}

/// How far the builds sharing an [`IndexBuild`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildSnapshot {
    /// A walk is listing the tree (the number of files is not known yet).
    pub walking: bool,
    /// Files to read (known once the walk is over).
    pub files_total: u64,
    /// Files read.
    pub files_done: u64,
    /// Time since the first walk or read began.
    pub elapsed: Duration,
    /// The last step begun.
    pub step: Step,
}

impl BuildSnapshot {
    /// The time still to go, extrapolated from the files read so far (`None`
    /// until a file was read, or while walking).
    pub fn remaining(&self) -> Option<Duration> {
        if self.walking || self.files_done == 0 || self.files_done >= self.files_total {
            return None;
        }
        let left = self.files_total - self.files_done;
        let per_file = self.elapsed.as_secs_f64() / self.files_done as f64;
        Some(Duration::from_secs_f64(per_file * left as f64))
    }
}

impl IndexBuild {
    /// A handle with nothing counted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// How far the builds are now.
    pub fn snapshot(&self) -> BuildSnapshot {
        let i = &self.inner;
        let started = *i.started.lock().unwrap_or_else(|p| p.into_inner());
        BuildSnapshot {
            walking: i.walking.load(Ordering::Acquire) > 0,
            files_total: i.files_total.load(Ordering::Acquire),
            files_done: i.files_done.load(Ordering::Acquire),
            elapsed: started.map_or(Duration::ZERO, |s| s.elapsed()),
            step: match i.step.load(Ordering::Acquire) {
                1 => Step::Saving,
                2 => Step::Embedding,
                _ => Step::Reading,
            },
        }
    }

    /// Stop reading files (the client is gone): see the module docs.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::Release);
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// A test hook: no file is read while `hold` returns `true` (the walk
    /// still runs, so the number of files is known). A test makes a build
    /// as slow as it needs, with no timing assumption, and releases it when
    /// it has seen what it wants. Cancelling releases it too.
    pub fn hold_while(&self, hold: impl Fn() -> bool + Send + Sync + 'static) {
        *self.inner.hold.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(hold));
    }

    fn mark_started(&self) {
        let mut started = self.inner.started.lock().unwrap_or_else(|p| p.into_inner());
        started.get_or_insert_with(Instant::now);
    }

    /// A walk begins; the returned guard ends it.
    pub(crate) fn walk(&self) -> WalkGuard<'_> {
        self.mark_started();
        self.inner.walking.fetch_add(1, Ordering::AcqRel);
        WalkGuard(self)
    }

    /// `files` more files are to be read; waits while the hold says so.
    pub(crate) fn reading(&self, files: usize) {
        self.mark_started();
        self.inner
            .files_total
            .fetch_add(files as u64, Ordering::AcqRel);
        loop {
            let held = self
                .inner
                .hold
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .is_some_and(|hold| hold());
            if !held || self.is_cancelled() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A step after reading begins.
    pub(crate) fn step(&self, step: Step) {
        let n = match step {
            Step::Reading => 0,
            Step::Saving => 1,
            Step::Embedding => 2,
        };
        self.inner.step.store(n, Ordering::Release);
    }

    /// `files` more files were read.
    pub(crate) fn read(&self, files: usize) {
        self.inner
            .files_done
            .fetch_add(files as u64, Ordering::AcqRel);
    }
}

/// Ends a walk when dropped (see [`IndexBuild::walk`]).
pub(crate) struct WalkGuard<'a>(&'a IndexBuild);

impl Drop for WalkGuard<'_> {
    fn drop(&mut self) {
        self.0.inner.walking.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_walks_and_files_and_extrapolates_the_time_left() {
        let build = IndexBuild::new();
        assert_eq!(build.snapshot().files_total, 0);
        {
            let _walk = build.walk();
            assert!(build.snapshot().walking);
            assert_eq!(build.snapshot().remaining(), None);
        }
        build.reading(10);
        build.read(4);
        let s = build.snapshot();
        assert!(!s.walking);
        assert_eq!((s.files_done, s.files_total), (4, 10));
        build.step(Step::Embedding);
        assert_eq!(build.snapshot().step, Step::Embedding);
        let at = BuildSnapshot {
            elapsed: Duration::from_secs(8),
            ..s
        };
        assert_eq!(at.remaining(), Some(Duration::from_secs(12)));
    }

    #[test]
    fn a_hold_keeps_reading_back_until_released_or_cancelled() {
        let build = IndexBuild::new();
        build.hold_while(|| true);
        let b = build.clone();
        let reader = std::thread::spawn(move || b.reading(3));
        std::thread::sleep(Duration::from_millis(60));
        assert!(!reader.is_finished(), "the hold was not honoured");
        build.cancel();
        reader.join().unwrap();
        assert!(build.is_cancelled());
    }
}
