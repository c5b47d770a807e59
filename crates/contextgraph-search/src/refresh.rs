//! Bringing the index up to date with the files: walk, compare metadata,
//! read/hash/chunk what changed on all cores, apply, persist.

use std::collections::BTreeMap;

use foldhash::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use contextgraph_types::Timestamp;

use crate::chunk::{chunk_file_in, LineIndex};
use crate::index::{build_chunk_records_in, sha256, FileRecord, Index};
use crate::lang::Language;
use crate::progress::Progress;
use crate::same_content::SameContent;
use crate::scan::{full_scan, quick_scan};
use crate::semantic_cold::{embed_file, ColdVectors, FileVectors};
use crate::store::JournalEntry;
use crate::walk::{content_gate, SkipReason, WalkOptions, WalkedFile};
use crate::workspace::{IndexError, Workspace};
use contextgraph_embed::StaticModel;

/// What a refresh did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefreshReport {
    /// Files new to the index.
    pub added: usize,
    /// Files whose content changed and were re-chunked.
    pub changed: usize,
    /// Files removed (deleted, renamed away, newly ignored).
    pub removed: usize,
    /// Files whose metadata changed but whose content hash did not (not re-chunked).
    pub touched: usize,
    /// Files unchanged.
    pub unchanged: usize,
    /// Files left out, by reason (name, size and content gates).
    pub skipped: BTreeMap<SkipReason, usize>,
    /// Bytes read and hashed.
    pub bytes_read: u64,
    /// Files found new or changed but not re-indexed because the refresh's
    /// deadline passed ([`Workspace::refresh_within`]), sorted. Until a later
    /// refresh reaches them, a new one is not found and a changed one keeps
    /// its old chunks, which are served only where they still match the
    /// file's bytes.
    pub pending: Vec<String>,
}

impl RefreshReport {
    /// Whether anything in the index changed.
    pub fn changed_anything(&self) -> bool {
        self.added + self.changed + self.removed + self.touched > 0
    }
}

impl Workspace {
    /// Bring the index up to date with the files: a metadata check (the
    /// quick check of `scan.rs`: one stat per known file and
    /// directory, a listing only of directories whose stamp changed, a full
    /// walk only when ignore rules changed or nothing is remembered yet),
    /// then only files whose content hash changed are re-chunked, on all
    /// cores (metadata-only changes are re-hashed and kept), deleted and
    /// renamed-away files are removed, and the changes are appended to the
    /// persistent journal. Queries keep being answered from the previous
    /// index while this runs.
    pub fn refresh(&self) -> Result<RefreshReport, IndexError> {
        self.refresh_inner(false, None, false)
    }

    /// [`refresh`](Self::refresh) by a full walk of the tree, as every
    /// refresh did before the quick check existed: for the freshness
    /// benchmark's side-by-side figures, not for serving.
    #[cfg(feature = "bench-internals")]
    #[doc(hidden)]
    pub fn refresh_by_full_walk(&self) -> Result<RefreshReport, IndexError> {
        self.refresh_inner(false, None, true)
    }

    /// [`refresh`](Self::refresh), but files not read by `deadline` from now
    /// are left for a later refresh and listed in
    /// [`RefreshReport::pending`], so an answer can say which files it may
    /// not reflect. Removals are always applied.
    pub fn refresh_within(&self, deadline: Duration) -> Result<RefreshReport, IndexError> {
        self.refresh_inner(false, Some(Instant::now() + deadline), false)
    }

    /// What an answer of a long-running server does first: nothing, when
    /// the file watcher demonstrably keeps the index current (see
    /// [`crate::watch_trust`] for the rule), else
    /// [`refresh_within`](Self::refresh_within)`(deadline)`. `Ok(None)`
    /// means the scan was skipped.
    pub fn refresh_for_query(
        &self,
        deadline: Duration,
    ) -> Result<Option<RefreshReport>, IndexError> {
        if self.scan_needed().is_none() {
            return Ok(None);
        }
        self.refresh_within(deadline).map(Some)
    }

    /// Why an answer must scan the tree first now, or `None` when the
    /// watcher keeps the index current and the scan may be skipped.
    pub fn scan_needed(&self) -> Option<crate::watch_trust::ScanNeeded> {
        let trust = self
            .shared
            .watch_trust
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match trust {
            Some(t) => t.scan_needed(),
            None => Some(crate::watch_trust::ScanNeeded::NoWatcher),
        }
    }

    /// The refresh; `full_walk` skips the quick check (a full walk also
    /// happens whenever the quick check cannot decide).
    pub(crate) fn refresh_inner(
        &self,
        full_snapshot: bool,
        deadline: Option<Instant>,
        full_walk: bool,
    ) -> Result<RefreshReport, IndexError> {
        let _guard = self
            .shared
            .refresh_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let shared = &self.shared;
        let scan_start_ns = crate::tree::nanos(SystemTime::now());
        // The watcher's events this refresh covers (see `crate::watch_trust`).
        let watch_trust = shared
            .watch_trust
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let events_began = watch_trust.as_ref().map(|t| t.refresh_begins());
        // New and changed files with their new modification times, for the
        // watcher's missed-change check.
        let mut changed_stamps: Vec<(String, i128)> = Vec::new();
        let mut tree_slot = shared.tree.lock().unwrap_or_else(|p| p.into_inner());
        if tree_slot.is_none() && !shared.tree_load_tried.swap(true, Ordering::Relaxed) {
            // Once per process: the tree saved beside the index just loaded.
            *tree_slot = shared
                .store
                .as_ref()
                .zip(shared.loaded_binding.as_ref())
                .and_then(|(store, binding)| store.load_tree(binding));
        }
        // Saved chunks that failed their checksum on first use (see
        // `index/frozen.rs`) were not served; the index is rebuilt from the
        // files now, as a load that failed its checks would have been.
        let mut full_snapshot = full_snapshot;
        if !self.read_index().is_intact() {
            *shared.index.write().unwrap_or_else(|p| p.into_inner()) = Index::default();
            *tree_slot = None;
            full_snapshot = true;
        }
        let threads = self.threads();
        let build = shared.options.build.as_ref();
        let walk = build.map(|b| b.walk());
        let quick = tree_slot.as_mut().filter(|_| !full_walk).and_then(|tree| {
            quick_scan(
                &shared.root,
                tree,
                &shared.options.walk,
                scan_start_ns,
                threads,
            )
        });
        let mut report = RefreshReport::default();
        let mut work: Vec<(WalkedFile, Option<FileRecord>)> = Vec::new();
        let mut removed: Vec<String> = Vec::new();
        let mut tree_changed = true;
        // Work items from this position on are only verified (see
        // `Delta::verify`): not pending when a deadline stops them.
        let mut verify_from = usize::MAX;
        // Whether the whole tree was rebuilt (every proof re-derived) rather
        // than only the files looked at (see `crate::unchanged`).
        let mut full = true;
        match (quick, tree_slot.as_ref()) {
            (Some(delta), Some(tree)) => {
                tree_changed = delta.tree_changed;
                full = false;
                let index = self.read_index();
                removed = delta
                    .gone
                    .into_iter()
                    .filter(|p| index.file_head(p).is_some())
                    .collect();
                for known in tree.files.values() {
                    if let Some(reason) = known.skipped {
                        *report.skipped.entry(reason).or_default() += 1;
                    }
                }
                let looked_at: HashSet<&str> = delta
                    .candidates
                    .iter()
                    .chain(&delta.verify)
                    .map(|f| f.rel_path.as_str())
                    .chain(removed.iter().map(String::as_str))
                    .collect();
                for rec in index.heads() {
                    if looked_at.contains(rec.rel_path.as_str()) {
                        continue;
                    }
                    report.unchanged += 1;
                    if let Some(reason) = rec.skipped {
                        *report.skipped.entry(reason).or_default() += 1;
                    }
                }
                drop(looked_at);
                verify_from = delta.candidates.len();
                work = delta
                    .candidates
                    .into_iter()
                    .chain(delta.verify)
                    .map(|f| {
                        let previous = index.file(&f.rel_path).cloned();
                        (f, previous)
                    })
                    .collect();
            }
            _ => {
                let previous_tree = tree_slot.take();
                let (walked, tree) =
                    full_scan(&shared.root, &shared.options.walk, scan_start_ns, threads);
                for (_, reason) in &walked.skipped {
                    *report.skipped.entry(*reason).or_default() += 1;
                }
                // Decide what to read, under a short read lock.
                let index = self.read_index();
                let present: HashSet<&str> =
                    walked.files.iter().map(|f| f.rel_path.as_str()).collect();
                for rec in index.heads() {
                    if !present.contains(rec.rel_path.as_str()) {
                        removed.push(rec.rel_path.clone());
                    }
                }
                // A file whose settled stamp moved although size and
                // modification time did not (an edit that restored them)
                // is read again.
                let stamp_moved = |rel: &str| {
                    let before = previous_tree.as_ref().and_then(|t| t.files.get(rel));
                    let now = tree.as_ref().and_then(|t| t.files.get(rel));
                    matches!(
                        (before.and_then(|k| k.stamp), now.and_then(|k| k.stamp)),
                        (Some(b), Some(n)) if b != n
                    )
                };
                // Files kept on size and modification time alone, with no
                // earlier tree whose stamps saw them read: an edit that
                // restored both would go unseen, so their stamps are not
                // trusted until the next check hashes them again.
                let mut unproven: Vec<&str> = Vec::new();
                for f in &walked.files {
                    match index.file_head(&f.rel_path) {
                        Some(rec)
                            if rec.size == f.size
                                && rec.mtime_ns.is_some()
                                && rec.mtime_ns == f.mtime.map(nanos)
                                && !stamp_moved(&f.rel_path) =>
                        {
                            report.unchanged += 1;
                            if let Some(reason) = rec.skipped {
                                *report.skipped.entry(reason).or_default() += 1;
                            }
                            if previous_tree.is_none() {
                                unproven.push(&f.rel_path);
                            }
                        }
                        Some(_) => work.push((f.clone(), index.file(&f.rel_path).cloned())),
                        None => work.push((f.clone(), None)),
                    }
                }
                drop(index);
                let mut tree = tree;
                if let Some(tree) = tree.as_mut() {
                    for rel in unproven {
                        if let Some(known) = tree.files.get_mut(rel) {
                            known.settled = false;
                        }
                    }
                }
                *tree_slot = tree;
            }
        }
        drop(walk);
        removed.sort();
        let looked_at: Vec<String> = work
            .iter()
            .map(|(f, _)| f.rel_path.clone())
            .chain(removed.iter().cloned())
            .collect();
        let now = (shared.options.clock)();
        // Decided before reading: a snapshot is written from the index
        // itself, so the records can move into it (no copy of every term
        // string during a cold build); only a journal append needs them kept.
        let snapshot = shared.store.as_ref().is_some_and(|store| {
            let journal_large = store.journal_bytes() > 64 * 1024
                && store.journal_bytes() * 4 > store.snapshot_bytes();
            full_snapshot || journal_large || store.snapshot_bytes() == 0
        });
        // A build into an empty index (the first run, or a rebuild after a
        // failed check) goes into a fresh index as the files are read, in
        // work order, instead of holding every file's records (term counts
        // and all) until the last file is read: the records of 16k files
        // were most of the build's peak memory. The empty index keeps
        // answering until the new one replaces it.
        let mut staging: Option<Index> = (self.read_index().heads().next().is_none()
            && (snapshot || shared.store.is_none()))
        .then(Index::default);
        // A cold build's workers embed each file's chunks as they chunk
        // it, and the vectors are laid out by slot as the records go into
        // the staging index (see `semantic_cold.rs`): no pass over the
        // files after the build, no core idle at its end.
        let embed: Option<&'static StaticModel> = staging
            .as_ref()
            .filter(|_| {
                shared.options.semantic
                    && shared
                        .semantic
                        .lock()
                        .is_ok_and(|semantic| semantic.is_none())
            })
            .and_then(|_| contextgraph_embed::builtin().ok());
        let mut cold = embed.map(ColdVectors::new);
        let staging_layout = staging.as_ref().map(Index::layout_id);
        let mut upserts: Vec<FileRecord> = Vec::new();
        let mut touches: Vec<JournalEntry> = Vec::new();
        let take = |i: usize, outcome: Option<Option<Indexed>>| {
            let (file, previous) = &work[i];
            let Some(outcome) = outcome else {
                // Not reached: judged again by the next check.
                let verify_only = i >= verify_from;
                if let Some(known) = tree_slot
                    .as_mut()
                    .and_then(|t| t.files.get_mut(&file.rel_path))
                {
                    if verify_only {
                        known.settled = false;
                    } else {
                        known.stamp = None;
                    }
                    tree_changed = true;
                }
                if !verify_only {
                    report.pending.push(file.rel_path.clone());
                }
                return;
            };
            report.bytes_read += outcome.as_ref().map_or(0, |(o, _)| o.size);
            let Some((record, vectors)) = outcome else {
                // Vanished between walk and read: treat as removed.
                if let Some(tree) = tree_slot.as_mut() {
                    tree.files.remove(&file.rel_path);
                    tree_changed = true;
                }
                if previous.is_some() {
                    removed.push(file.rel_path.clone());
                }
                return;
            };
            if let Some(reason) = record.skipped {
                *report.skipped.entry(reason).or_default() += 1;
            }
            match previous {
                Some(prev)
                    if prev.content_hash == record.content_hash
                        && prev.skipped == record.skipped
                        && prev.size == record.size
                        && prev.mtime_ns == record.mtime_ns =>
                {
                    // Read again only because its stamp was not settled
                    // (or its change time moved): nothing to update.
                    report.unchanged += 1;
                    return;
                }
                Some(prev)
                    if prev.content_hash == record.content_hash
                        && prev.skipped == record.skipped =>
                {
                    // Same bytes: chunks and postings stay, only the size
                    // and time move (no terms rebuilt from the postings).
                    report.touched += 1;
                    touches.push(JournalEntry::Touch {
                        rel_path: record.rel_path,
                        size: record.size,
                        mtime_ns: record.mtime_ns,
                    });
                    return;
                }
                Some(_) => report.changed += 1,
                None => report.added += 1,
            }
            if watch_trust.is_some() {
                changed_stamps.push((
                    record.rel_path.clone(),
                    record.mtime_ns.unwrap_or(i128::MAX),
                ));
            }
            match staging.as_mut() {
                Some(staging) => {
                    if let Some(cold) = cold.as_mut() {
                        cold.push_file(&record.chunks, vectors.as_ref());
                    }
                    staging.upsert(record)
                }
                None => upserts.push(record),
            }
        };
        self.process_all(
            &work,
            verify_from.min(work.len()),
            now,
            deadline,
            embed,
            take,
        );
        report.removed = removed.len();
        report.pending.sort();
        let journal_upserts: Vec<FileRecord> = if snapshot || shared.store.is_none() {
            Vec::new()
        } else {
            upserts.clone()
        };
        if report.changed_anything() {
            let mut index = shared.index.write().unwrap_or_else(|p| p.into_inner());
            if let Some(staging) = staging {
                // Built from the same records in the same order as the
                // upserts below would have been.
                *index = staging;
            }
            for r in &removed {
                index.remove(r);
            }
            for r in upserts {
                index.upsert(r);
            }
            for t in &touches {
                if let JournalEntry::Touch {
                    rel_path,
                    size,
                    mtime_ns,
                } = t
                {
                    index.touch(rel_path, *size, *mtime_ns);
                }
            }
            index.compact_if_sparse();
        }
        if let (Some(cold), Some(layout)) = (cold, staging_layout) {
            // Used only when the index is the one the rows were laid out
            // for, and within the semantic signal's limit.
            let semantic = {
                let index = self.read_index();
                (index.chunk_count() <= shared.options.semantic_max_chunks)
                    .then(|| cold.finish(&index, layout))
                    .flatten()
            };
            if let Some(semantic) = semantic {
                let mut slot = shared.semantic.lock().unwrap_or_else(|p| p.into_inner());
                if slot.is_none() {
                    *slot = Some(semantic);
                }
            }
        }
        {
            // After the index: see `crate::unchanged` on the order.
            let index = self.read_index();
            let mut proven = shared.proven.write().unwrap_or_else(|p| p.into_inner());
            if full {
                proven.rebuild(tree_slot.as_ref(), &index);
            } else {
                proven.update(
                    tree_slot.as_ref(),
                    &index,
                    looked_at.iter().map(String::as_str),
                );
            }
        }
        if let Some(store) = &shared.store {
            if let Some(b) = build.filter(|_| snapshot) {
                b.step(crate::build_status::Step::Saving);
            }
            let mut written = false;
            if snapshot {
                let index = self.read_index();
                let id = store.write_index_on(&index, self.threads())?;
                *shared
                    .saved_layout
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) =
                    Some(crate::semantic_workspace::SavedLayout::written(id, &index));
                written = true;
            } else if report.changed_anything() {
                let mut entries: Vec<JournalEntry> =
                    removed.into_iter().map(JournalEntry::Delete).collect();
                entries.extend(journal_upserts.into_iter().map(JournalEntry::Upsert));
                entries.extend(touches);
                store.append(&entries)?;
                written = true;
            }
            // After the index: a tree saved first and an index write that
            // failed would claim changes the saved index lacks.
            if written || tree_changed {
                if let Some(tree) = tree_slot.as_ref() {
                    store.write_tree(tree)?;
                }
            }
        }
        // Complete only when nothing was left for later.
        if let (Some(trust), Some(began)) = (&watch_trust, events_began) {
            if report.pending.is_empty() {
                trust.refresh_completed(began, i128::from(scan_start_ns), &changed_stamps);
            }
        }
        Ok(report)
    }

    /// Threads for reading and stat'ing files, and for embedding chunks.
    pub(crate) fn threads(&self) -> usize {
        match self.shared.options.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
        .clamp(1, 16)
    }

    /// Read, gate and chunk files on all cores, handing each outcome to
    /// `take` on the calling thread in work order as soon as it and every
    /// earlier one are done (so records are applied while later files are
    /// still read, not all held until the last one), with progress when
    /// asked (counting the first `indexing` items: the rest are only
    /// verified, a read and a hash, and no reason to announce an index).
    /// `take` gets `None` for a file not started before `deadline`,
    /// `Some(None)` for one that could not be read (it vanished).
    fn process_all(
        &self,
        work: &[(WalkedFile, Option<FileRecord>)],
        indexing: usize,
        now: Timestamp,
        deadline: Option<Instant>,
        embed: Option<&StaticModel>,
        mut take: impl FnMut(usize, Option<Option<Indexed>>),
    ) {
        let threads = self.threads().min(work.len().max(1));
        let next = AtomicUsize::new(0);
        // Files without an earlier record whose bytes another one has are
        // chunked once (`same_content.rs`).
        let same = SameContent::for_files(
            work.iter()
                .filter(|(_, previous)| previous.is_none())
                .map(|(file, _)| file),
        );
        let same = &same;
        let options = &self.shared.options;
        let mut progress = Progress::start(options.progress_label, indexing, options.progress);
        let build = options.build.as_ref();
        if let Some(build) = build {
            build.reading(indexing);
        }
        // A cancelled build stops as a passed deadline does (see `build_status`).
        let stop = || {
            deadline.is_some_and(|d| Instant::now() >= d) || build.is_some_and(|b| b.is_cancelled())
        };
        // Outcomes that arrived ahead of an earlier one still being read.
        let mut ahead: BTreeMap<usize, Option<Indexed>> = BTreeMap::new();
        let mut handed = 0usize;
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel::<(usize, Option<Indexed>)>();
            for _ in 0..threads {
                let tx = tx.clone();
                let next = &next;
                let stop = &stop;
                scope.spawn(move || loop {
                    if stop() {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((file, previous)) = work.get(i) else {
                        break;
                    };
                    let record =
                        index_file(file, previous.as_ref(), now, &options.walk, embed, same);
                    if previous.is_none() {
                        same.finished(file);
                    }
                    if tx.send((i, record)).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            let mut ticked = Instant::now();
            loop {
                // Disconnected once every worker stopped and everything
                // they sent was received.
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok((i, record)) => {
                        ahead.insert(i, record);
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
                while let Some(record) = ahead.remove(&handed) {
                    take(handed, Some(record));
                    handed += 1;
                    if let Some(build) = build.filter(|_| handed <= indexing) {
                        build.read(1);
                    }
                }
                if let Some(progress) = progress.as_mut() {
                    if ticked.elapsed() >= Duration::from_millis(100) {
                        progress.tick(handed.min(indexing));
                        ticked = Instant::now();
                    }
                }
            }
        });
        if let Some(progress) = progress {
            progress.finish(handed.min(indexing));
        }
        // Files are started in order, so those never started (the deadline
        // passed) are the tail; an outcome is never dropped all the same.
        for i in handed..work.len() {
            take(i, ahead.remove(&i));
        }
    }
}

/// A file read and chunked: its record, and its chunks' vectors when the
/// workers embed (a cold build, `semantic_cold.rs`).
type Indexed = (FileRecord, Option<FileVectors>);

fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

fn timestamp_of(t: SystemTime) -> Timestamp {
    Timestamp::from_system_time(t)
}

/// Read, gate, hash and chunk one file, and with `embed` embed its chunks
/// (`semantic_cold.rs`; `None` vectors when that panicked). `None` when it
/// cannot be read. A new file whose content `same` already holds gets
/// those records instead of being chunked again (`same_content.rs`).
pub(crate) fn index_file(
    file: &WalkedFile,
    previous: Option<&FileRecord>,
    now: Timestamp,
    walk: &WalkOptions,
    embed: Option<&StaticModel>,
    same: &SameContent,
) -> Option<(FileRecord, Option<FileVectors>)> {
    let bytes = std::fs::read(&file.abs_path).ok()?;
    let content_hash = sha256(&bytes);
    let language = Language::detect(&file.rel_path);
    let mut record = FileRecord {
        rel_path: file.rel_path.clone(),
        content_hash,
        size: bytes.len() as u64,
        mtime_ns: file.mtime.map(nanos),
        language,
        skipped: None,
        chunks: Vec::new(),
    };
    if previous.is_some_and(|p| p.content_hash == content_hash) {
        // Same bytes: the caller keeps the previous chunks (not re-chunked).
        record.skipped = previous.and_then(|p| p.skipped);
        return Some((record, None));
    }
    if bytes.len() as u64 > walk.max_file_bytes {
        record.skipped = Some(SkipReason::TooLarge);
        return Some((record, None));
    }
    // A name can lie: a file holding a private key or a token is a secret
    // whatever it is called (N7, `contextgraph_types::secrets`).
    let admitted = content_gate(&bytes).and_then(|text| {
        let secret = contextgraph_types::secrets::secret_in_content(text).is_some();
        // cgp's own session files are never evidence, even with secrets on (N9).
        if contextgraph_types::secrets::is_cgp_state(&file.rel_path, text)
            || (secret && !walk.include_secrets)
        {
            Err(SkipReason::Secret)
        } else {
            Ok(text)
        }
    });
    let mut vectors = None;
    match admitted {
        Err(reason) => record.skipped = Some(reason),
        Ok(text) => {
            // One line index for the chunker, the records and the
            // embeddings, in a buffer the worker reuses from file to file.
            vectors = LineIndex::with_reused(text, |lines| {
                let mtime = file.mtime.map(timestamp_of);
                let key = previous
                    .is_none()
                    .then(|| same.key(file, language, content_hash))
                    .flatten();
                match key.as_ref().and_then(|k| same.get(file, k)) {
                    Some(done) => {
                        record.chunks =
                            SameContent::adapt(&done, &file.rel_path, language, now, mtime);
                    }
                    None => {
                        let chunks = chunk_file_in(&file.rel_path, language, text, lines);
                        record.chunks =
                            build_chunk_records_in(text, lines, chunks, previous, now, mtime);
                        if let Some(key) = key {
                            same.put(file, key, &record.chunks);
                        }
                    }
                }
                embed.and_then(|model| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        embed_file(model, &record.rel_path, text, lines, &record.chunks)
                    }))
                    .ok()
                })
            });
        }
    }
    Some((record, vectors))
}
