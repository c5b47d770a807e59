//! How the suite runs: timeouts, caps, the goals it asks with, strictness.

use std::time::Duration;

/// Default per-request deadline.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// Default time a provider gets to exit after `shutdown` (R2).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// Default cap on one line (stdio) or one response body (HTTP): the codec's
/// 16 MiB, the same a host enforces.
pub const DEFAULT_MAX_LINE_BYTES: usize = contextgraph_codec::DEFAULT_MAX_LINE_BYTES;

/// Default amount of provider stderr kept for evidence (the tail).
pub const DEFAULT_STDERR_TAIL_BYTES: usize = 8 * 1024;

/// The goals tried, in order, until one is answered with frames. A suite
/// cannot know what a provider holds; these match the usual developer
/// documentation, and `--goal` puts the caller's own first.
pub const DEFAULT_GOALS: [&str; 3] = [
    "retry policy, backoff and timeouts",
    "overview introduction getting started",
    "readme usage configuration",
];

/// Options of one suite run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SuiteOptions {
    /// Longest wait for any one reply (or one HTTP exchange).
    pub request_timeout: Duration,
    /// How long the provider may take to exit after `shutdown` before it is
    /// killed and R2 fails.
    pub shutdown_grace: Duration,
    /// Longest line (stdio) or body (HTTP) read from the provider.
    pub max_line_bytes: usize,
    /// Provider stderr kept for evidence.
    pub stderr_tail_bytes: usize,
    /// Goals tried in order for the baseline query.
    pub goals: Vec<String>,
    /// A skipped check fails the run too (CI mode: nothing may go untested).
    pub strict: bool,
}

impl Default for SuiteOptions {
    fn default() -> Self {
        SuiteOptions {
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            stderr_tail_bytes: DEFAULT_STDERR_TAIL_BYTES,
            goals: DEFAULT_GOALS.iter().map(|g| (*g).to_owned()).collect(),
            strict: false,
        }
    }
}

impl SuiteOptions {
    /// Set strictness (a skip fails the run).
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Set the per-request deadline.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Set the shutdown grace period.
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Try `goal` before the default goals.
    #[must_use]
    pub fn with_goal_first(mut self, goal: impl Into<String>) -> Self {
        self.goals.insert(0, goal.into());
        self
    }
}
