//! [`HistoryProvider`]: the history index, kept up to date with `HEAD`,
//! answering the protocol.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use contextgraph_provider_sdk::{pack, verify_each, FrameBuilder, Provider, ProviderError};
use contextgraph_search::query_terms::query_words;
use contextgraph_search::store::{cache_dir_for, default_cache_base};
use contextgraph_search::uri::file_uri;
use contextgraph_search::CacheLocation;
use contextgraph_types::sha256::sha256_digest;
use contextgraph_types::{
    Capabilities, ContextQuery, ContextQueryResult, DataFlow, EgressScope, FrameKind, ProviderInfo,
    QueryCapability, Relation, Representation, Timestamp, Verdict, VerifyRequest, VerifyResponse,
};
use git2::{Oid, Repository};

use crate::anchor;
use crate::blame::blame_lines;
use crate::error::HistoryError;
use crate::gate::PathGate;
use crate::indexer::{self, BuildReport};
use crate::limits::{MAX_BLAMED_FILES, MAX_CANDIDATES, MAX_DIFF_BYTES_PER_REQUEST, MAX_VERIFY_IDS};
use crate::rank::{self, AnchorEvidence, BLAME_EVIDENCE, CO_CHANGE_EVIDENCE};
use crate::render::{render, FrameKey, NotServed};
use crate::search::Searchable;
use crate::store::{Store, Stored};
use crate::{PROVIDER_NAME, PROVIDER_VERSION};

/// Most history frames served by default for a goal without anchors that
/// asks nothing about history (see [`rank::asks_about_history`]): none.
/// The localization benchmark (README) found one such frame adds 0.017
/// recall@10 on held-out repositories, short of the 0.05 issue 27 asks
/// before history may compete with code for a task goal's budget.
pub const PLAIN_GOAL_FRAMES: u32 = 0;

/// The relation from a commit to a file it changed.
pub const CHANGED_REL: &str = "episode.changed";

/// The working tree of the git repository at or above `dir`, when there is
/// one (a bare repository has none). For a host deciding whether to start
/// the provider at all.
pub fn working_tree_of(dir: &Path) -> Option<PathBuf> {
    Repository::discover(dir)
        .ok()?
        .workdir()
        .map(Path::to_path_buf)
}

/// How the provider indexes.
#[derive(Debug, Clone)]
pub struct HistoryOptions {
    /// Where the persisted index lives (the workspace index's cache base by
    /// default, see `contextgraph_search::store`).
    pub cache: CacheLocation,
    /// Most commits indexed (newest first).
    pub max_commits: usize,
    /// Most frames for a plain task goal (no anchors, no question about
    /// history); [`PLAIN_GOAL_FRAMES`] by default.
    pub plain_goal_frames: u32,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            cache: CacheLocation::Default,
            max_commits: indexer::DEFAULT_CAP,
            plain_goal_frames: PLAIN_GOAL_FRAMES,
        }
    }
}

/// A CGP provider over one git working tree's history. Cheap to clone.
#[derive(Clone)]
pub struct HistoryProvider {
    inner: Arc<Inner>,
}

struct Inner {
    workdir: PathBuf,
    repo: Mutex<Repository>,
    store: Option<Store>,
    max_commits: usize,
    plain_goal_frames: u32,
    index: RwLock<Arc<Searchable>>,
    /// Whether `index` holds the persisted or built index yet (see
    /// [`HistoryProvider::ensure_loaded`]); the mutex orders first loads.
    loaded: Mutex<bool>,
    last_build: Mutex<BuildReport>,
}

/// Where the snapshot handed to [`HistoryProvider::refresh_from`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// The index in memory (a refresh): nothing to install when current.
    Memory,
    /// The stored index (or none): installed; saved when it changed.
    Store,
    /// A legacy `history.json`: installed and always saved as `history.idx`.
    Legacy,
}

impl std::fmt::Debug for HistoryProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryProvider")
            .field("workdir", &self.inner.workdir)
            .finish_non_exhaustive()
    }
}

impl HistoryProvider {
    /// Open the repository at or above `dir` and bring its history index up
    /// to date (loading the persisted one and reading only the commits
    /// since its head, or building it).
    pub fn open(
        dir: impl AsRef<Path>,
        options: HistoryOptions,
    ) -> Result<HistoryProvider, HistoryError> {
        let dir = dir.as_ref();
        let repo = Repository::discover(dir).map_err(|e| HistoryError::NotARepository {
            path: dir.to_path_buf(),
            message: e.message().to_owned(),
        })?;
        let workdir = repo
            .workdir()
            .ok_or_else(|| HistoryError::Bare {
                path: repo.path().to_path_buf(),
            })?
            .to_path_buf();
        let workdir = workdir.canonicalize().unwrap_or(workdir);
        let store = match &options.cache {
            CacheLocation::Disabled => None,
            CacheLocation::Base(b) => Some(Store::new(&cache_dir_for(b, &workdir), &workdir)),
            CacheLocation::Default => {
                default_cache_base().map(|b| Store::new(&cache_dir_for(&b, &workdir), &workdir))
            }
        };
        let provider = HistoryProvider {
            inner: Arc::new(Inner {
                workdir,
                repo: Mutex::new(repo),
                store,
                max_commits: options.max_commits.max(1),
                plain_goal_frames: options.plain_goal_frames,
                index: RwLock::new(Arc::new(Searchable::new(crate::store::Snapshot {
                    head: String::new(),
                    truncated: false,
                    shallow: false,
                    unreadable: 0,
                    commits: Vec::new(),
                }))),
                last_build: Mutex::new(BuildReport::default()),
                loaded: Mutex::new(false),
            }),
        };
        // The index is loaded (or built) on first use: a plain task goal,
        // which history does not answer by default, costs no index at all.
        Ok(provider)
    }

    /// The working tree's root (canonical).
    pub fn workdir(&self) -> &Path {
        &self.inner.workdir
    }

    /// Where the persisted index is (`None`: persistence disabled).
    pub fn index_file(&self) -> Option<&Path> {
        self.inner.store.as_ref().map(Store::file)
    }

    /// Number of commits indexed.
    pub fn commits(&self) -> usize {
        self.index().len()
    }

    /// What the last build did.
    pub fn last_build(&self) -> BuildReport {
        self.ensure_loaded();
        self.inner
            .last_build
            .lock()
            .map(|b| b.clone())
            .unwrap_or_default()
    }

    /// What a person should know about what this history can answer: a
    /// shallow clone, commits left out by the cap, unreadable objects.
    pub fn notes(&self) -> Vec<String> {
        // Cheap before the index is loaded (a host asks at start): the
        // shallow check reads one file; the index's own notes come once
        // it is loaded.
        let index = self.current();
        let s = &index.snapshot;
        let mut notes = Vec::new();
        if !indexer::shallow_boundary(&self.repo()).is_empty() {
            notes.push(format!(
                "{PROVIDER_NAME}: {} is a shallow clone: only the commits it holds are served, older history is not there (fetch it with `git fetch --unshallow`)",
                self.inner.workdir.display()
            ));
        }
        if s.truncated {
            notes.push(format!(
                "{PROVIDER_NAME}: only the newest {} commits of {} are indexed",
                s.commits.len(),
                self.inner.workdir.display()
            ));
        }
        if s.unreadable > 0 {
            notes.push(format!(
                "{PROVIDER_NAME}: {} commit(s) of {} could not be read (missing objects) and are not served",
                s.unreadable,
                self.inner.workdir.display()
            ));
        }
        notes
    }

    /// Load the persisted index and bring it up to `HEAD` (or build it),
    /// once. An error is reported on stderr and leaves the index empty: the
    /// provider then answers nothing rather than failing every query.
    fn ensure_loaded(&self) {
        let mut loaded = match self.inner.loaded.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if *loaded {
            return;
        }
        let stored = match self.inner.store.as_ref().map(Store::load) {
            None | Some(Ok(None)) => None,
            Some(Ok(Some(stored))) => Some(stored),
            Some(Err(e)) => {
                say(&e.to_string());
                None
            }
        };
        let result = match stored {
            Some(Stored::Index(index)) => {
                let current = indexer::head_id(&self.repo())
                    .is_some_and(|h| index.snapshot.head == h.to_string());
                if current {
                    // The warm path: installed as read, nothing rebuilt.
                    self.install(Arc::new(index), BuildReport::default());
                    Ok(BuildReport::default())
                } else {
                    self.refresh_from(Some(index.snapshot), Origin::Store)
                }
            }
            Some(Stored::Legacy(snapshot)) => self.refresh_from(Some(snapshot), Origin::Legacy),
            None => self.refresh_from(None, Origin::Store),
        };
        if let Err(e) = result {
            say(&e.to_string());
        }
        *loaded = true;
    }

    /// The index as it is (no load).
    fn current(&self) -> Arc<Searchable> {
        match self.inner.index.read() {
            Ok(g) => Arc::clone(&g),
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }

    /// The index, loaded on first use.
    fn index(&self) -> Arc<Searchable> {
        self.ensure_loaded();
        self.current()
    }

    /// Bring the index up to date with `HEAD` (only new commits are read;
    /// a rewritten history is re-read whole). Cheap when `HEAD` has not moved.
    pub fn refresh(&self) -> Result<BuildReport, HistoryError> {
        self.ensure_loaded();
        let current = self.current();
        // Every query asks; when `HEAD` has not moved the answer is one ref
        // read, with no copy of the index (which holds every commit).
        if indexer::head_id(&self.repo()).is_some_and(|h| current.snapshot.head == h.to_string()) {
            return Ok(BuildReport::default());
        }
        let current = current.snapshot.clone();
        let previous = (!current.head.is_empty()).then_some(current);
        self.refresh_from(previous, Origin::Memory)
    }

    /// Bring `previous` up to `HEAD` and install it. From the store it is
    /// installed even when current (and written back only when it changed,
    /// or when it came from a legacy `history.json`, to convert it).
    fn refresh_from(
        &self,
        previous: Option<crate::store::Snapshot>,
        origin: Origin,
    ) -> Result<BuildReport, HistoryError> {
        let repo = self.repo();
        let before = previous.as_ref().map(|p| p.head.clone());
        let built = indexer::build(&repo, &self.inner.workdir, previous, self.inner.max_commits)?;
        drop(repo);
        let Some((snapshot, report)) = built else {
            return Ok(BuildReport::default());
        };
        let unchanged = before.as_deref() == Some(snapshot.head.as_str());
        if unchanged && origin == Origin::Memory {
            return Ok(report);
        }
        let searchable = Arc::new(Searchable::new(snapshot));
        if let (true, Some(store)) = (!unchanged || origin == Origin::Legacy, &self.inner.store) {
            if let Err(e) = store.save(&searchable) {
                say(&format!(
                    "{PROVIDER_NAME}: cannot write the history index {} ({e}); answering from memory",
                    store.file().display()
                ));
            }
        }
        self.install(searchable, report.clone());
        Ok(report)
    }

    /// Make `index` the one queries see, and `report` the last build's.
    fn install(&self, index: Arc<Searchable>, report: BuildReport) {
        match self.inner.index.write() {
            Ok(mut g) => *g = index,
            Err(p) => *p.into_inner() = index,
        }
        if let Ok(mut b) = self.inner.last_build.lock() {
            *b = report;
        }
    }

    fn repo(&self) -> std::sync::MutexGuard<'_, Repository> {
        match self.inner.repo.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Anchor evidence: blame of anchored lines, the commits touching each
    /// anchored file, and those touching the files that change with it.
    fn anchor_evidence(
        &self,
        repo: &Repository,
        index: &Searchable,
        anchors: &[String],
        newest: Option<Oid>,
        gate: &mut PathGate,
    ) -> AnchorEvidence {
        let mut evidence = AnchorEvidence::default();
        let mut files: Vec<anchor::LineAnchor> = Vec::new();
        for a in anchors {
            if let Some(t) = anchor::parse(&self.inner.workdir, a) {
                if gate.admits(&t.rel_path) && !files.iter().any(|f| f == &t) {
                    files.push(t);
                }
            }
            if files.len() >= MAX_BLAMED_FILES {
                break;
            }
        }
        for f in &files {
            for (n, &pos) in index.touching(&f.rel_path).iter().take(12).enumerate() {
                evidence.add(pos, rank::touch_evidence(n), &f.rel_path);
            }
            if f.lines.is_some() {
                if let Some(newest) = newest {
                    if let Ok(owners) = blame_lines(repo, &f.rel_path, f.lines, newest) {
                        for (id, _lines) in owners.iter().take(8) {
                            if let Some(pos) = index.position(id) {
                                evidence.add(pos, BLAME_EVIDENCE, &f.rel_path);
                            }
                        }
                    }
                }
            }
            for (partner, _) in index.co_changed(&f.rel_path, 50, 3) {
                if !gate.admits(&partner) {
                    continue;
                }
                for &pos in index.touching(&partner).iter().take(3) {
                    evidence.add(pos, CO_CHANGE_EVIDENCE, &partner);
                }
            }
        }
        evidence
    }
}

impl Provider for HistoryProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: PROVIDER_NAME.into(),
            version: PROVIDER_VERSION.into(),
            // Reads the repository; persists only an index derived from it;
            // nothing leaves the machine.
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
                kinds: vec![FrameKind::Episode],
            },
            correlation: true,
            graph: false,
            embeddings_fingerprint: None,
            verify: true,
            representations: vec![Representation::Full],
            resolve: false,
        }
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        contextgraph_types::limits::check_query(query)
            .map_err(|limit| ProviderError::bad_request(format!("query over a limit: {limit}")))?;
        if !query.accepts_kind(&FrameKind::Episode) {
            // Q1: the only kind served was not asked for.
            return Ok(ContextQueryResult::default());
        }
        let plain = query.anchors.is_empty() && !rank::asks_about_history(query.match_text());
        if plain && self.inner.plain_goal_frames == 0 {
            // A plain task goal gets no history frame (see below): answered
            // without touching the index, so it costs the host nothing.
            return Ok(ContextQueryResult::default());
        }
        if let Err(e) = self.refresh() {
            say(&format!("{e}; answering from the index as it was"));
        }
        let pin = match query.as_of.as_deref() {
            Some(t) => Some(
                Timestamp::parse(t)
                    .map_err(|e| ProviderError::bad_request(format!("as_of {t:?}: {e}")))?
                    .unix_seconds(),
            ),
            None => None,
        };
        let index = self.index();
        let repo = self.repo();
        let mut gate = PathGate::new(&self.inner.workdir);
        let in_time = |pos: u32| {
            index
                .commit(pos)
                .is_some_and(|c| pin.is_none_or(|p| c.author_time <= p && c.commit_time <= p))
        };
        // Blame as of the newest commit not after `as_of` (the index is newest first).
        let newest = (0..index.len() as u32)
            .find(|&p| in_time(p))
            .and_then(|p| index.commit(p))
            .and_then(|c| Oid::from_str(&c.id).ok());
        let words = query_words(query.match_text(), 32);
        let evidence = self.anchor_evidence(&repo, &index, &query.anchors, newest, &mut gate);
        let eligible = |pos: u32| {
            in_time(pos)
                && index
                    .commit(pos)
                    .is_some_and(|c| !c.refused && !only_withheld(c))
        };
        // Frames are built for at most `build_at_most` candidates; a few
        // times that many are ranked in full, for the ones whose frame
        // cannot be served (a hidden path, an unreadable object).
        let ranked = rank::rank(
            &index,
            &words,
            &evidence,
            &eligible,
            MAX_CANDIDATES.saturating_mul(4),
        );
        // A plain task goal ("add X") without anchors gets at most
        // `plain_goal_frames` history frames (none by default): they
        // compete with the code under one budget, and a goal that asks
        // nothing about history is answered by code first. Anchors or a
        // question about history (`why`, `changed`, `commit`, …) lift it.
        let mut packing = query.clone();
        if plain {
            packing.max_frames = packing.max_frames.min(self.inner.plain_goal_frames);
        }
        if packing.max_frames == 0 {
            // Nothing is built: the candidates exist, none is served.
            return Ok(ContextQueryResult {
                frames: Vec::new(),
                truncated: ranked.total > 0,
                dropped_estimate: u32::try_from(ranked.total).ok().filter(|&n| n > 0),
            });
        }
        // Packing takes at most `max_frames`: a few more are built so that
        // ones over the budget can be replaced, not all 48.
        let build_at_most = (packing.max_frames as usize)
            .saturating_mul(3)
            .clamp(8, MAX_CANDIDATES);
        let mut frames = Vec::new();
        let mut diff_bytes = 0usize;
        // Ranked commits not even considered count as left out.
        let mut left_out = ranked.total.saturating_sub(ranked.top.len()) as u64;
        for cand in ranked.top.iter() {
            if frames.len() >= build_at_most {
                left_out += 1;
                continue;
            }
            let Some(rec) = index.commit(cand.pos) else {
                continue;
            };
            let with_path = cand
                .path
                .as_deref()
                .filter(|_| diff_bytes < MAX_DIFF_BYTES_PER_REQUEST);
            let rendered = match with_path
                .map(|p| render(&repo, rec, Some(p), &mut gate, &self.inner.workdir))
            {
                Some(Ok(r)) => Ok((r, with_path)),
                // The path's diff may not be served (or could not be read):
                // the commit alone.
                _ => render(&repo, rec, None, &mut gate, &self.inner.workdir).map(|r| (r, None)),
            };
            let Ok((r, shown)) = rendered else { continue };
            if !rec.paths.is_empty() && all_hidden(rec, &mut gate) {
                // Every path it changed is one whose history is not served.
                continue;
            }
            diff_bytes += r.diff_bytes;
            let key = FrameKey {
                commit: &rec.id,
                path: shown,
            };
            frames.push(build_frame(&self.inner.workdir, rec, &key, r, cand.score));
        }
        let mut result = pack(frames, &packing);
        if left_out > 0 {
            let dropped = u64::from(result.dropped_estimate.unwrap_or(0)) + left_out;
            result.truncated = true;
            result.dropped_estimate = Some(u32::try_from(dropped).unwrap_or(u32::MAX));
        }
        Ok(result)
    }

    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        if let Err(e) = self.refresh() {
            say(&format!("{e}; verifying against the index as it was"));
        }
        let index = self.index();
        let repo = self.repo();
        let mut gate = PathGate::new(&self.inner.workdir);
        verify_each(request, MAX_VERIFY_IDS, |frame_id, presented| {
            let Some(key) = FrameKey::parse(frame_id) else {
                return Verdict::Gone;
            };
            // Reachable from HEAD: in the index (rebuilt whole when HEAD's
            // history was rewritten), or, past a cap, by the commit graph.
            let rec = match index.position(key.commit).and_then(|p| index.commit(p)) {
                Some(r) => r.clone(),
                None if index.snapshot.truncated => {
                    match reachable_record(&repo, &index, key.commit) {
                        Some(r) => r,
                        None => return Verdict::Gone,
                    }
                }
                None => return Verdict::Gone,
            };
            match render(&repo, &rec, key.path, &mut gate, &self.inner.workdir) {
                Ok(r) => contextgraph_provider_sdk::verify::verdict(
                    presented,
                    contextgraph_provider_sdk::verify::Served::Now(&sha256_digest(
                        r.content.as_bytes(),
                    )),
                ),
                Err(NotServed::Refused) => Verdict::Gone,
                Err(NotServed::Unreadable(_)) => Verdict::Unknown,
            }
        })
    }
}

/// The record of commit `id` when `HEAD` reaches it though the index
/// (cut at its cap) does not hold it.
fn reachable_record(
    repo: &Repository,
    index: &Searchable,
    id: &str,
) -> Option<crate::record::CommitRecord> {
    let oid = Oid::from_str(id).ok()?;
    let head = Oid::from_str(&index.snapshot.head).ok()?;
    if !repo.graph_descendant_of(head, oid).ok()? {
        return None;
    }
    let boundary = indexer::shallow_boundary(repo).contains(&oid);
    indexer::read_commit(repo, oid, boundary).ok()
}

/// Whether every path `rec` changed was left out of the index as a secret.
fn only_withheld(rec: &crate::record::CommitRecord) -> bool {
    rec.paths.is_empty() && rec.withheld > 0
}

/// Whether every path `rec` changed is one whose history is not served now.
fn all_hidden(rec: &crate::record::CommitRecord, gate: &mut PathGate) -> bool {
    rec.paths.iter().all(|p| !gate.admits(&p.path))
}

fn build_frame(
    workdir: &Path,
    rec: &crate::record::CommitRecord,
    key: &FrameKey<'_>,
    r: crate::render::Rendered,
    score: f32,
) -> contextgraph_types::ContextFrame {
    let mut b = FrameBuilder::new(key.id(), FrameKind::Episode, r.title, r.content)
        .uri(match key.path {
            Some(p) => format!("git:{}:{p}", rec.id),
            None => format!("git:{}", rec.id),
        })
        .score(score)
        .citation_label(r.label)
        .valid_from(Timestamp::from_unix(rec.author_time, 0))
        .recorded_at(Timestamp::from_unix(rec.commit_time, 0));
    for p in r.provenance {
        b = b.provenance(p);
    }
    b = b.relations(r.paths.iter().map(|p| Relation {
        rel: CHANGED_REL.into(),
        target_uri: file_uri(workdir, p),
        display_name: Some(p.clone()),
    }));
    b.build()
}

/// Write one diagnostic line on stderr through the project's terminal rule:
/// these lines carry paths (the working tree's, the cache file's) and, for
/// a stored index of another tree, the tree path read from that file, and a
/// directory name can hold an escape sequence.
fn say(line: &str) {
    eprintln!("{}", diagnostic(line));
}

/// [`say`]'s text: control characters and look-alikes escaped.
fn diagnostic(line: &str) -> std::borrow::Cow<'_, str> {
    contextgraph_types::display_text::for_terminal(line)
}

#[cfg(test)]
mod say_tests {
    use super::diagnostic;

    #[test]
    fn a_diagnostic_never_carries_a_control_character_to_the_terminal() {
        let hostile = "history: the history index /c/h.idx describes /w/\u{1b}]0;owned\u{7}\nforged: line, not this working tree";
        let shown = diagnostic(hostile);
        assert!(!shown.chars().any(|c| c.is_control()), "escaped: {shown:?}");
        assert!(shown.contains("owned") && shown.contains("not this working tree"));
    }
}
