//! How a [`Workspace`](crate::Workspace) indexes: what the walk admits,
//! where the index persists, threads, progress and the clock.

use std::path::PathBuf;
use std::sync::Arc;

use contextgraph_types::Timestamp;

use crate::rerank::RerankSignals;
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
    /// goal against every chunk vector at query time (an int8 pass bound by
    /// memory bandwidth: about a millisecond on a 5,000-chunk project,
    /// 10 ms on 594,000 chunks on two cores).
    pub semantic: bool,
    /// The semantic signal is used only while the index holds at most this
    /// many chunks (see [`DEFAULT_SEMANTIC_MAX_CHUNKS`]): the scoring pass
    /// and the vectors file grow with the repository.
    pub semantic_max_chunks: usize,
}

/// Default for [`WorkspaceOptions::semantic_max_chunks`]: one million
/// chunks, about 30,000 files. Up to it the signal costs a bounded share of
/// every query: measured on a 17,914-file, 594,161-chunk copy of the cargo
/// registry (`examples/semantic_scale.rs`, interleaved runs, medians), a
/// warm open + one query costs about what it costs without the signal
/// (the vectors file, 164 bytes a chunk, is mapped and read in place), a
/// query about 10 ms more, and a cold build a few percent more CPU. Past
/// it the pass (about 17 ms at a million chunks) and the 164 MB vectors
/// file grow on; the limit keeps both bounded. (Before the vectors were
/// stored aligned with the index's slots, each process paid about 3 us per
/// chunk to line them up, and the limit was 50,000.)
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
        }
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
