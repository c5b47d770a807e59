//! How a [`Workspace`](crate::Workspace) indexes: what the walk admits,
//! where the index persists, threads, progress and the clock.

use std::path::PathBuf;
use std::sync::Arc;

use contextgraph_types::Timestamp;

use crate::build_status::IndexBuild;
use crate::rerank::{RankingEnvError, RerankSignals};
use crate::walk::WalkOptions;

/// A source of "now", injectable so tests can pin `recorded_at`.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// Where the persistent index lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheLocation {
    /// The documented default (see [`crate::store`]).
    Default,
    /// This base directory (the per-workspace directory is created inside).
    Base(PathBuf),
    /// No persistence: index in memory only.
    Disabled,
}

/// How the provider indexes and serves.
#[derive(Clone)]
pub struct WorkspaceOptions {
    /// What the walk admits.
    pub walk: WalkOptions,
    /// Where the persistent index lives.
    pub cache: CacheLocation,
    /// Draw a progress bar on stderr while indexing many files.
    pub progress: bool,
    /// The name the progress bar starts with (the program serving the index).
    pub progress_label: &'static str,
    /// Indexing threads; 0 means one per available core.
    pub threads: usize,
    /// The clock stamping `recorded_at`.
    pub clock: Clock,
    /// Which steps of the ranking layer run (all by default; the retrieval
    /// benchmark switches one off at a time to measure it).
    pub rank_signals: RerankSignals,
    /// Use the built-in static embedding model as a ranking signal (see
    /// [`crate::semantic`]). On by default: with the ranking layer as it
    /// stands (the semantic score fused with the lexical one, and the
    /// question steps that read it), the retrieval benchmark's tuning half
    /// gains +0.018 NDCG@10 (0.852 → 0.870; architecture 0.749 → 0.788)
    /// and the held-out half +0.015 (0.839 → 0.854). The cost is embedding
    /// every chunk when the index is built (a few percent more cold-build
    /// CPU; the vectors persist beside the index, aligned with its slots,
    /// so a warm open maps them without per-chunk work) and scoring the
    /// goal against every chunk vector at query time (an int8 pass: well
    /// under a millisecond on a 5,000-chunk project, 3.7 ms on 594,000
    /// chunks on two cores; with the fusion of its best matches a query
    /// takes about 7 ms more there).
    pub semantic: bool,
    /// The semantic signal is used only while the index holds at most this
    /// many chunks (see [`DEFAULT_SEMANTIC_MAX_CHUNKS`]): the scoring pass
    /// and the vectors file grow with the repository.
    pub semantic_max_chunks: usize,
    /// Where the build reports how far it is, and how it is cancelled (a
    /// server answering while it indexes; see [`crate::build_status`]).
    pub build: Option<IndexBuild>,
}

/// Default for [`WorkspaceOptions::semantic_max_chunks`]: one million
/// chunks, about 30,000 files. Up to it the signal costs a bounded share of
/// every query. Measured on a 17,914-file, 594,161-chunk copy of the cargo
/// registry (`examples/semantic_scale.rs`: new processes, interleaved,
/// medians of 7 at load average 2–4 on 2 cores): a warm open + one query
/// takes 0.10 s wall / 0.09 s CPU / 395 MiB with the signal against
/// 0.07 s / 0.06 s / 280 MiB without (the vectors file, 164 bytes a chunk,
/// is mapped and checked, not decoded); a query's p50 is 12.6 ms against
/// 5.2 ms; a cold build takes 8–14% more CPU and 764 against 645 MiB.
/// Past the limit the scoring pass (about 6 µs per 1,000 chunks on two
/// cores) and the vectors file keep growing; the limit keeps both
/// bounded. (While each process paid about 3 µs per chunk to line the
/// saved vectors up with the index, the limit was 50,000: the same warm
/// open took 2.7 s and 1,550 MiB.)
pub const DEFAULT_SEMANTIC_MAX_CHUNKS: usize = 1_000_000;

impl Default for WorkspaceOptions {
    fn default() -> Self {
        WorkspaceOptions {
            walk: WalkOptions::default(),
            cache: CacheLocation::Default,
            progress: false,
            progress_label: "contextgraph-search",
            threads: 0,
            clock: Arc::new(Timestamp::now),
            rank_signals: RerankSignals::default(),
            semantic: true,
            semantic_max_chunks: DEFAULT_SEMANTIC_MAX_CHUNKS,
            build: None,
        }
    }
}

/// The variable that switches the semantic signal off (`0`) or on (`1`).
pub const SEMANTIC_VAR: &str = "CGP_SEMANTIC";

impl WorkspaceOptions {
    /// These options with the ranking switches of the environment applied:
    /// `CGP_RANK_SIGNALS_OFF` / `CGP_RANK_SIGNALS_ON` (see
    /// [`RerankSignals::from_env`]) and `CGP_SEMANTIC` (`0`: open without
    /// the semantic signal, no chunk is embedded; `1`: with it). The shipped
    /// `cgp context` and `cgp serve workspace` open their workspace through
    /// this, as the benchmarks do, so a signal's worth can be measured on
    /// any repository. Unset variables leave the options as they are; a
    /// value that is not understood is an error naming the variable.
    pub fn with_ranking_from_env(mut self) -> Result<WorkspaceOptions, RankingEnvError> {
        self.rank_signals = RerankSignals::from_env()?;
        match std::env::var(SEMANTIC_VAR) {
            Err(std::env::VarError::NotPresent) => {}
            Ok(v) => self.semantic = semantic_switch(&v)?,
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(RankingEnvError {
                    var: SEMANTIC_VAR,
                    value: "(not UTF-8)".to_owned(),
                    expected: "0 or 1",
                })
            }
        }
        Ok(self)
    }
}

/// The value of `CGP_SEMANTIC`: `0` / `off` / `false` or `1` / `on` / `true`.
pub fn semantic_switch(value: &str) -> Result<bool, RankingEnvError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "0" | "off" | "false" => Ok(false),
        "1" | "on" | "true" => Ok(true),
        _ => Err(RankingEnvError {
            var: SEMANTIC_VAR,
            value: value.to_owned(),
            expected: "0 or 1",
        }),
    }
}

impl std::fmt::Debug for WorkspaceOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceOptions")
            .field("walk", &self.walk)
            .field("cache", &self.cache)
            .field("progress", &self.progress)
            .field("threads", &self.threads)
            .field("rank_signals", &self.rank_signals)
            .finish_non_exhaustive()
    }
}
