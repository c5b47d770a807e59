//! [`WorkspaceProvider`]: the index, kept fresh, answering the protocol.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use contextgraph_provider_sdk::{
    clamp_score, file_excerpt_of, pack, rank, FrameBuilder, Provider, ProviderError,
};
use contextgraph_types::digest::format_sha256;
use contextgraph_types::sha256::sha256_digest;
use contextgraph_types::{
    token_cost_of_len, Capabilities, ContentFidelity, ContentRef, ContextFrame, ContextQuery,
    ContextQueryResult, DataFlow, EgressScope, FrameKind, LineRange, ProviderInfo, QueryCapability,
    Representation, Timestamp, Transform, VerifyRequest, VerifyResponse,
};

use crate::verify::GoneReason;
use contextgraph_search::chunk::code::name_in_file;
use contextgraph_search::index::ChunkRecord;
use contextgraph_search::lang::Language;
use contextgraph_search::store::StoreError;
use contextgraph_search::uri::{file_uri, CONTENT_REF_SCHEME};
use contextgraph_search::{
    FileCache, IndexError, IndexSource, IndexStats, Ranked, RefreshReport, SearchOptions,
    SearchView, Workspace, WorkspaceOptions,
};

/// The provider id (its `info().name`), used in frame identities.
pub const PROVIDER_NAME: &str = "contextgraph-provider-workspace";

/// The version reported in the handshake and provenance `by`.
pub const PROVIDER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Most candidates turned into frames per query before packing.
const MAX_MATERIALIZED: usize = 400;

/// Why the provider could not start.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The root is not a readable directory.
    #[error("{PROVIDER_NAME}: workspace {path} is not a readable directory ({source}); pass an existing directory")]
    Root {
        /// The path given.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The index could not be written (queries still work from memory).
    #[error("{PROVIDER_NAME}: {0}; check the cache directory is writable or disable the cache")]
    Store(#[from] StoreError),
    /// A ranking switch variable (`CGP_RANK_SIGNALS_OFF`, `CGP_RANK_SIGNALS_ON`,
    /// `CGP_SEMANTIC`) holds a value that is not understood.
    #[error("{PROVIDER_NAME}: {0}")]
    Ranking(#[from] contextgraph_search::rerank::RankingEnvError),
}

impl From<IndexError> for WorkspaceError {
    fn from(e: IndexError) -> Self {
        match e {
            IndexError::Root { path, source } => WorkspaceError::Root { path, source },
            IndexError::Store(e) => WorkspaceError::Store(e),
        }
    }
}

/// A CGP provider over one workspace directory: the search library's
/// [`Workspace`] answering the protocol. Cheap to clone (shared state).
#[derive(Clone)]
pub struct WorkspaceProvider {
    pub(crate) workspace: Workspace,
    /// When set, each query first brings the index up to date within this
    /// deadline ([`WorkspaceProvider::with_fresh_queries`]).
    pub(crate) fresh_within: Option<Duration>,
    /// Files read to check held frames (see
    /// [`WorkspaceProvider::verify_file_reads`]).
    pub(crate) file_reads: Arc<AtomicU64>,
    /// Files chunked to check held frames (see
    /// [`WorkspaceProvider::verify_file_chunkings`]).
    pub(crate) file_chunkings: Arc<AtomicU64>,
    /// Chunk records kept decoded between answers, at most
    /// ([`WorkspaceProvider::with_decoded_records_budget`]).
    pub(crate) decoded_budget: usize,
}

impl std::fmt::Debug for WorkspaceProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceProvider")
            .field("root", &self.workspace.root())
            .finish_non_exhaustive()
    }
}

impl WorkspaceProvider {
    /// Open the workspace at `root`: load the persistent index when it is
    /// trustworthy (answering immediately from it; call
    /// [`refresh`](Self::refresh) to catch up with the files), else build it
    /// from the files and persist it.
    pub fn open(
        root: impl AsRef<Path>,
        mut options: WorkspaceOptions,
    ) -> Result<(WorkspaceProvider, IndexSource), WorkspaceError> {
        options.progress_label = PROVIDER_NAME;
        let (workspace, source) = Workspace::open(root, options)?;
        Ok((
            WorkspaceProvider {
                workspace,
                fresh_within: None,
                file_reads: Arc::default(),
                file_chunkings: Arc::default(),
                decoded_budget: contextgraph_search::DECODED_RECORDS_BUDGET,
            },
            source,
        ))
    }

    /// Before answering each query, bring the index up to date with the
    /// files (a metadata scan; only what changed is re-read), spending at
    /// most `deadline` re-indexing. Files the deadline cut short are named
    /// on stderr; their stale chunks are never served (every frame is
    /// re-checked against the file's bytes), but their new content may be
    /// missing from that answer. For servers; a host that can show warnings
    /// calls [`refresh_within`](Self::refresh_within) itself.
    pub fn with_fresh_queries(mut self, deadline: Duration) -> Self {
        self.fresh_within = Some(deadline);
        self
    }

    /// Keep at most `budget` chunk records decoded between answers
    /// (default [`contextgraph_search::DECODED_RECORDS_BUDGET`]): each
    /// answer decodes the records it ranks and keeps them for the next
    /// ones, and past the budget they are all forgotten after the answer
    /// (see [`Workspace::bound_decoded_records`]). Lower it to trade the
    /// next answers' decoding for memory.
    pub fn with_decoded_records_budget(mut self, budget: usize) -> Self {
        self.decoded_budget = budget;
        self
    }

    /// The search index underneath.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        self.workspace.root()
    }

    /// Index statistics.
    pub fn stats(&self) -> IndexStats {
        self.workspace.stats()
    }

    /// Bring the index up to date with the files (see [`Workspace::refresh`]).
    /// Queries keep being answered from the previous index while this runs.
    pub fn refresh(&self) -> Result<RefreshReport, WorkspaceError> {
        Ok(self.workspace.refresh()?)
    }

    /// [`refresh`](Self::refresh) cut short after `deadline`; the files not
    /// reached are in [`RefreshReport::pending`] (see
    /// [`Workspace::refresh_within`]).
    pub fn refresh_within(&self, deadline: Duration) -> Result<RefreshReport, WorkspaceError> {
        Ok(self.workspace.refresh_within(deadline)?)
    }

    /// The full source behind a compact frame's `content_ref`, when the file
    /// still holds exactly the bytes the reference names (its digest matches).
    pub fn resolve(&self, content_ref: &ContentRef) -> Result<String, ProviderError> {
        let rest = content_ref.uri.strip_prefix(CONTENT_REF_SCHEME).ok_or_else(|| {
            ProviderError::bad_request(format!(
                "{PROVIDER_NAME}: content_ref {:?} is not a {CONTENT_REF_SCHEME} reference from this provider",
                content_ref.uri
            ))
        })?;
        let (frame_id, digest) = rest.rsplit_once("?digest=").ok_or_else(|| {
            ProviderError::bad_request(format!(
                "{PROVIDER_NAME}: content_ref {:?} lacks its digest",
                content_ref.uri
            ))
        })?;
        let current = self.current_chunk(frame_id).map_err(|e| {
            ProviderError::new(
                contextgraph_types::ErrorCode::Other("workspace:gone".into()),
                format!("{PROVIDER_NAME}: {frame_id} is no longer served ({e}); re-query for fresh frames"),
            )
        })?;
        if sha256_digest(current.region.as_bytes()) != digest {
            return Err(ProviderError::new(
                contextgraph_types::ErrorCode::Other("workspace:stale".into()),
                format!("{PROVIDER_NAME}: {frame_id} changed since the reference was issued (V4); re-query"),
            ));
        }
        Ok(current.region)
    }

    /// The chunk a frame id names, re-chunked from the file as it is now.
    fn current_chunk(&self, frame_id: &str) -> Result<CurrentChunk, GoneReason> {
        let (rel, local) = frame_id
            .rsplit_once('#')
            .ok_or("not a frame id of this provider")?;
        let mut ignore = contextgraph_search::walk::IgnoreRules::new(self.root());
        let (path, _) = self.admitted_file(rel, &mut ignore)?;
        self.read_chunks(rel, &path, |chunks| {
            chunks
                .into_iter()
                .find(|(c, _)| c.local_id == local)
                .map(|(_c, region)| CurrentChunk {
                    region: region.to_owned(),
                    #[cfg(feature = "bench-internals")]
                    outline: _c.outline,
                })
        })?
        .ok_or("the chunk no longer exists")
    }

    /// The region of one candidate as the file holds it now, with its
    /// provenance: `None` when the file no longer holds the indexed bytes
    /// (the index is behind; the next refresh catches up). Whether a
    /// candidate can become a frame at all is exactly whether this is `Some`.
    fn fresh_excerpt<'v, 'f>(
        &self,
        view: &'v SearchView<'_>,
        slot: u32,
        files: &'f mut FileCache,
    ) -> Option<Fresh<'v, 'f>> {
        let (rel, c) = view.chunk(slot)?;
        let stale = files.stale_flag();
        let uri = files.file_uri(self.root(), rel)?.to_owned();
        let range = LineRange::new(c.start_line, c.end_line)?;
        let bytes = files.lines(self.root(), rel, c.start_line, c.end_line)?;
        let by = format!("{PROVIDER_NAME}/{PROVIDER_VERSION}");
        let path = self.root().join(rel);
        let excerpt = file_excerpt_of(&path, uri, bytes, range, &c.method, &by);
        let region_digest = format_sha256(&c.digest);
        if excerpt.provenance.digest.as_deref() != Some(region_digest.as_str()) {
            stale.store(true, std::sync::atomic::Ordering::Relaxed);
            return None;
        }
        let region = excerpt.text()?;
        Some(Fresh {
            rel,
            chunk: c,
            region,
            region_digest,
            provenance: excerpt.provenance,
        })
    }

    /// Build the frame of one candidate from the file bytes as they are now;
    /// `None` when the file no longer holds the indexed bytes (see
    /// [`fresh_excerpt`](Self::fresh_excerpt)).
    fn materialize(
        &self,
        view: &SearchView<'_>,
        slot: u32,
        score: f32,
        compact: bool,
        files: &mut FileCache,
    ) -> Option<ContextFrame> {
        let Fresh {
            rel,
            chunk: c,
            region,
            region_digest,
            provenance,
        } = self.fresh_excerpt(view, slot, files)?;
        // Owned now: the file's bytes are no longer borrowed, so the
        // relations can make their URIs through the same cache.
        let region = region.to_owned();
        let region_len = region.len();
        let id = format!("{rel}#{}", c.local_id);
        let (title, label) = labels(rel, c);
        let use_outline = compact && c.outline.is_some();
        // The provenance URI is `path_to_file_uri(root/rel)`, which is what
        // `file_uri(root, rel)` returns whenever it succeeds (and the excerpt
        // exists only when it did): taken from there, not computed twice.
        let uri = provenance
            .uri
            .clone()
            .unwrap_or_else(|| file_uri(self.root(), rel));
        let (content, fidelity) = if use_outline {
            (
                c.outline.clone().unwrap_or_default(),
                ContentFidelity::Summarized,
            )
        } else {
            // The exact content is set below.
            (String::new(), ContentFidelity::Exact)
        };
        let mut frame = FrameBuilder::new(id.clone(), c.kind.frame_kind(), title, content)
            .uri(uri)
            .score(score)
            .citation_label(label)
            .recorded_at(c.recorded_at)
            .valid_from(c.valid_from)
            .provenance(provenance)
            .relations(view.relations_cached(slot, files))
            .content_fidelity(fidelity)
            .build();
        if !use_outline {
            // The content is the region whose digest `fresh_excerpt` has
            // just checked against the index: its digest is known, so it is
            // set here rather than hashed a second time by `build` (the
            // frame is the same; a frame's hashing was a third of a query).
            frame.token_cost = token_cost_of_len(region_len);
            frame.content_digest = Some(region_digest.clone());
            frame.content = Some(region);
        }
        if use_outline {
            // P2: a compact frame names its full source (hash, cost, handle) and how it was distilled.
            frame.representation = Representation::Compact;
            frame.canonical_content_hash = Some(region_digest.clone());
            frame.canonical_token_cost = Some(token_cost_of_len(region_len));
            frame.transform = Some(Transform {
                method: "outline".into(),
                implementation: PROVIDER_NAME.into(),
                version: PROVIDER_VERSION.into(),
            });
            frame.content_ref = Some(ContentRef {
                provider_id: PROVIDER_NAME.into(),
                uri: format!("{CONTENT_REF_SCHEME}{id}?digest={region_digest}"),
                expires_at: None,
            });
        }
        Some(frame)
    }

    /// The frames of `ranked` that packing takes, in packing order, and how
    /// many candidates were left out (not fresh, over the budget, past the
    /// `want`-th fresh one, or not taken by packing).
    ///
    /// The answer is exactly that of materialising the first `want` fresh
    /// candidates that fit `budget` alone and packing them all ([`pack`]:
    /// score descending, then id; greedy under `max_tokens` and
    /// `max_frames`), but only frames packing can still take are built: a
    /// frame costs a file read, two digests and its relations, and most of
    /// the up to 400 candidates were built only to be dropped by packing.
    /// Candidates are walked in runs of equal score (the order packing
    /// sees them in, when `ranked`'s scores are as [`clamp_score`] leaves
    /// them); a candidate costing more than the budget left when its run
    /// starts cannot be taken, so only whether it is fresh matters (it
    /// counts towards `want`), and that is checked only when the `want`-th
    /// place is reached while some later candidate could still be taken.
    fn select(
        &self,
        view: &SearchView<'_>,
        ranked: &[Ranked],
        query: &ContextQuery,
        compact: bool,
        files: &mut FileCache,
    ) -> (Vec<ContextFrame>, u64) {
        let index = view.index();
        let budget = u64::from(query.max_tokens);
        let max_frames = usize::try_from(query.max_frames).unwrap_or(usize::MAX);
        let want = (query.max_frames as usize)
            .saturating_mul(4)
            .clamp(32, MAX_MATERIALIZED);
        // What a candidate's frame costs: its region's length, which is the
        // indexed length whenever the frame can be built (same digest).
        let cost = |slot: u32| {
            index.chunk(slot).map_or(u64::MAX, |(_, c)| {
                let len = match (&c.outline, compact) {
                    (Some(o), true) => o.len(),
                    _ => c.byte_len as usize,
                };
                u64::from(token_cost_of_len(len))
            })
        };
        let costs: Vec<u64> = ranked.iter().map(|r| cost(r.slot)).collect();
        let in_order = ranked
            .windows(2)
            .all(|w| clamp_score(w[0].score) >= clamp_score(w[1].score));
        if !in_order {
            return self.select_all(view, ranked, &costs, query, compact, want, files);
        }
        // The cheapest candidate from each position on (within the budget).
        let mut cheapest_from = vec![u64::MAX; ranked.len() + 1];
        for i in (0..ranked.len()).rev() {
            let c = if costs[i] <= budget {
                costs[i]
            } else {
                u64::MAX
            };
            cheapest_from[i] = cheapest_from[i + 1].min(c);
        }
        let mut taken: Vec<ContextFrame> = Vec::new();
        let mut remaining = budget;
        // Fresh candidates within `want` so far, and candidates counted
        // towards `want` before their freshness was checked.
        let mut fresh = 0usize;
        let mut unchecked: Vec<u32> = Vec::new();
        let mut capped = false;
        let mut i = 0;
        while i < ranked.len() && !capped && taken.len() < max_frames {
            let score = clamp_score(ranked[i].score);
            let end = ranked[i..]
                .iter()
                .position(|r| clamp_score(r.score) != score)
                .map_or(ranked.len(), |n| i + n);
            let room = remaining;
            let mut run: Vec<ContextFrame> = Vec::new();
            for k in i..end {
                if fresh + unchecked.len() >= want {
                    if unchecked.is_empty() || cheapest_from[k] > room {
                        // The `want`-th place is reached, or nothing from
                        // here on could be taken wherever it lies.
                        capped = true;
                        break;
                    }
                    fresh += unchecked
                        .drain(..)
                        .filter(|&s| self.fresh_excerpt(view, s, files).is_some())
                        .count();
                    if fresh >= want {
                        capped = true;
                        break;
                    }
                }
                if costs[k] > budget {
                    continue;
                }
                if taken.len() < max_frames && costs[k] <= room {
                    if let Some(f) =
                        self.materialize(view, ranked[k].slot, ranked[k].score, compact, files)
                    {
                        fresh += 1;
                        run.push(f);
                    }
                } else {
                    unchecked.push(ranked[k].slot);
                }
            }
            rank(&mut run);
            for f in run {
                let c = u64::from(f.token_cost);
                if taken.len() < max_frames && c <= remaining {
                    remaining -= c;
                    taken.push(f);
                }
            }
            i = end;
        }
        let left_out = (ranked.len() - taken.len()) as u64;
        (taken, left_out)
    }

    /// [`select`](Self::select) for a ranking not in packing order (a
    /// score packing reads differently): every candidate up to the
    /// `want`-th fresh one built, packed as a whole.
    #[allow(clippy::too_many_arguments)]
    fn select_all(
        &self,
        view: &SearchView<'_>,
        ranked: &[Ranked],
        costs: &[u64],
        query: &ContextQuery,
        compact: bool,
        want: usize,
        files: &mut FileCache,
    ) -> (Vec<ContextFrame>, u64) {
        let budget = u64::from(query.max_tokens);
        let mut frames = Vec::new();
        for (r, &cost) in ranked.iter().zip(costs) {
            if frames.len() >= want {
                break;
            }
            if cost > budget {
                continue;
            }
            if let Some(f) = self.materialize(view, r.slot, r.score, compact, files) {
                frames.push(f);
            }
        }
        let packed = pack(frames, query);
        let left_out = (ranked.len() - packed.frames.len()) as u64;
        (packed.frames, left_out)
    }
}

/// A candidate's region, checked against the index (see
/// [`WorkspaceProvider::fresh_excerpt`]).
struct Fresh<'v, 'f> {
    rel: &'v str,
    chunk: &'v ChunkRecord,
    region: &'f str,
    region_digest: String,
    provenance: contextgraph_types::Provenance,
}

/// A chunk re-read from its file (for `resolve`).
struct CurrentChunk {
    region: String,
    /// Only the per-identity `verify` kept for the benchmark reads it.
    #[cfg(feature = "bench-internals")]
    outline: Option<String>,
}

/// Title and citation label a person reads: `function net::retry_loop
/// (src/net.rs)` and `src/net.rs:L5-18 retry_loop`.
///
/// The label is what a prompt shows of a frame, on every block, so it says
/// each thing once: the path, the line range, and for a symbol its name
/// within the file (the module path is the file's path again); for a
/// section its heading. The frame's id and title (and so the JSON output
/// and the audit) keep the full identity.
fn labels(rel: &str, c: &ChunkRecord) -> (String, String) {
    let at = format!("{rel}:L{}-{}", c.start_line, c.end_line);
    match &c.symbol {
        Some(s) => {
            let name = name_in_file(Language::detect(rel), rel, &s.qualified);
            (format!("{} ({rel})", c.title), format!("{at} {name}"))
        }
        None => match c.kind {
            contextgraph_search::chunk::ChunkKind::Doc => (
                format!("{} ({rel})", c.title),
                format!("{at} § {}", c.title),
            ),
            _ => (format!("{rel} {}", c.title), at),
        },
    }
}

impl Provider for WorkspaceProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: PROVIDER_NAME.into(),
            version: PROVIDER_VERSION.into(),
            // Reads workspace files; persists only an index derived from those
            // files, never anything it receives; nothing leaves the machine.
            data_flow: DataFlow {
                reads: true,
                writes: false,
                egress: false,
                egress_scopes: vec![EgressScope::LocalOnly],
            },
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Symbol, FrameKind::Doc, FrameKind::Snippet],
            },
            correlation: true,
            graph: true,
            embeddings_fingerprint: None,
            verify: true,
            representations: vec![Representation::Full, Representation::Compact],
            // Honest: `resolve` returns the full source behind every content_ref we issue.
            resolve: true,
        }
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        // Bounded work per request (N5), also when called in-process, where
        // no SDK runner checked first.
        contextgraph_types::limits::check_query(query)
            .map_err(|limit| ProviderError::bad_request(format!("query over a limit: {limit}")))?;
        let scanned = match self.fresh_within {
            Some(deadline) => self.bring_up_to_date(deadline, false),
            None => true,
        };
        let result = self.answer(query)?;
        let result = if !scanned && result.1 {
            // The scan was skipped on the watcher's word, yet a cited file
            // no longer held its indexed bytes (an edit whose event is
            // still on its way): scan, and answer from the files as they are.
            if let Some(deadline) = self.fresh_within {
                self.bring_up_to_date(deadline, true);
            }
            self.answer(query)?.0
        } else {
            result.0
        };
        // The records this answer decoded are kept for the next ones, up
        // to a budget: a peer's goals must not grow memory without bound.
        self.workspace.bound_decoded_records(self.decoded_budget);
        Ok(result)
    }

    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        self.verify_by_file(request)
    }
}

impl WorkspaceProvider {
    /// The check before an answer of a server: skipped while the file
    /// watcher keeps the index current (see
    /// `contextgraph_search::watch_trust`), unless `force`; else a refresh
    /// within `deadline`, with what it could not reach said on stderr.
    /// Whether the tree was scanned.
    fn bring_up_to_date(&self, deadline: Duration, force: bool) -> bool {
        let outcome = if force {
            self.refresh_within(deadline).map(Some)
        } else {
            self.workspace
                .refresh_for_query(deadline)
                .map_err(WorkspaceError::from)
        };
        match outcome {
            Ok(None) => return false,
            Ok(Some(report)) if !report.pending.is_empty() => {
                let _ = writeln!(
                        std::io::stderr(),
                        "{PROVIDER_NAME}: {} changed file(s) not re-indexed within {} ms; this answer may miss their current content: {}",
                        report.pending.len(),
                        deadline.as_millis(),
                        report.pending.join(", ")
                    );
            }
            Ok(Some(_)) => {}
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "{e}");
            }
        }
        true
    }

    /// The answer from the index as it is, and whether some indexed region
    /// no longer matched its file (so the index is behind a file).
    fn answer(&self, query: &ContextQuery) -> Result<(ContextQueryResult, bool), ProviderError> {
        let served = [FrameKind::Symbol, FrameKind::Doc, FrameKind::Snippet];
        if !query.kinds.is_empty() && !query.kinds.iter().any(|k| served.contains(k)) {
            // Q1: none of the requested kinds is served: zero frames, not a guess.
            return Ok((ContextQueryResult::default(), false));
        }
        let pin = query
            .as_of
            .as_deref()
            .and_then(|t| Timestamp::parse(t).ok());
        let compact = query.select_representation(&[Representation::Full, Representation::Compact])
            == Some(Representation::Compact);
        let accept = |c: &ChunkRecord| {
            query.accepts_kind(&c.kind.frame_kind())
                && pin.is_none_or(|p| c.recorded_at <= p && c.valid_from <= p)
        };
        // The view brings the chunk vectors up to date before it holds the
        // index; the semantic pass (only the best accepted matches: the
        // ranking reads no more) runs beside the ranking's BM25 part.
        let view = self.workspace.view_with_semantic();
        let mut files = FileCache::default();
        let ranked = view.search_with_semantic(
            query.match_text(),
            contextgraph_search::semantic::SEMANTIC_SERVED,
            &SearchOptions {
                anchors: &query.anchors,
                accept: &accept,
                semantic: &[],
            },
            &mut files,
        );
        let (frames, left_out) = self.select(&view, &ranked, query, compact, &mut files);
        let mut result = pack(frames, query);
        if left_out > 0 {
            let dropped = u64::from(result.dropped_estimate.unwrap_or(0)) + left_out;
            result.truncated = true;
            result.dropped_estimate = Some(u32::try_from(dropped).unwrap_or(u32::MAX));
        }
        Ok((result, files.saw_stale()))
    }
}

/// `verify` as it was before identities were grouped by file: each identity
/// re-reads and re-chunks its file. For the verify benchmark's side-by-side
/// figures only.
#[cfg(feature = "bench-internals")]
impl WorkspaceProvider {
    #[doc(hidden)]
    pub fn verify_per_identity(&self, request: &VerifyRequest) -> VerifyResponse {
        use crate::verify::MAX_VERIFY_IDS;
        use contextgraph_provider_sdk::verify_each;
        use contextgraph_types::Verdict;
        use std::collections::HashMap;
        let mut cache: HashMap<String, Result<CurrentChunk, &'static str>> = HashMap::new();
        let indexed_compact: HashMap<String, String> = {
            let view = self.workspace.view();
            let index = view.index();
            request
                .frames
                .iter()
                .take(MAX_VERIFY_IDS)
                .filter_map(|id| {
                    let (rel, local) = id.frame_id.rsplit_once('#')?;
                    let (_, c) = index.find(rel, local)?;
                    let outline = c.outline.as_ref()?;
                    Some((id.frame_id.clone(), sha256_digest(outline.as_bytes())))
                })
                .collect()
        };
        // By frame id and digest: the identity's `provider_id` is the host's
        // label for this provider (echoed back, never judged; see
        // `contextgraph_provider_sdk::verify`).
        verify_each(request, MAX_VERIFY_IDS, |frame_id, presented| {
            let current = cache
                .entry(frame_id.to_owned())
                .or_insert_with(|| self.current_chunk(frame_id));
            match (current, presented) {
                (Err(_), _) => Verdict::Gone,
                // V1: without a digest there is nothing to compare.
                (Ok(_), None) => Verdict::Unknown,
                (Ok(cur), Some(presented)) => {
                    let full = sha256_digest(cur.region.as_bytes());
                    let compact = cur.outline.as_ref().map(|o| sha256_digest(o.as_bytes()));
                    if presented == full || compact.as_deref() == Some(presented) {
                        Verdict::Valid
                    } else {
                        // V4: the digest we would serve now, in the representation held.
                        let held_compact = indexed_compact
                            .get(frame_id)
                            .is_some_and(|d| d == presented);
                        let replacement = if held_compact {
                            compact.unwrap_or(full)
                        } else {
                            full
                        };
                        Verdict::Stale {
                            replacement_digest: Some(replacement),
                        }
                    }
                }
            }
        })
    }
}

#[cfg(test)]
#[path = "select_tests.rs"]
mod select_tests;

#[cfg(test)]
#[path = "region_tests.rs"]
mod region_tests;
