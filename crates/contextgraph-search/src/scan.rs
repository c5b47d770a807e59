//! The freshness check: which files changed since the last refresh, found
//! from metadata alone.
//!
//! [`quick_scan`] works from the remembered [`Tree`]: it stats every known
//! directory and file in parallel, re-lists only the directories whose
//! stamp changed (a new entry, a deletion or a rename changes its
//! directory's stamp), walks in full only directories that appeared, and
//! re-judges only files whose own stamp changed. On an unchanged tree that
//! is one `lstat` per known file (by its name, relative to its open
//! directory), one open and `fstat` per known directory, and no directory
//! read. Whatever it cannot
//! decide locally — a changed, new or unsettled ignore-rules file — it
//! hands back to the full walk ([`full_scan`]), which also rebuilds the tree.

use std::path::{Path, PathBuf};

use crate::tree::{Freshness, KnownFile, RulesFile, Stamp, Tree, IGNORE_FILE_NAMES};
use crate::walk::{verdict, walk_under, Walk, WalkOptions, WalkedFile};

/// What a quick scan found.
#[derive(Debug, Default)]
pub(crate) struct Delta {
    /// Admitted files to read: new ones, and known ones whose stamp changed.
    pub(crate) candidates: Vec<WalkedFile>,
    /// Admitted files read again only because their stamp was not settled
    /// ([`Freshness::Verify`]): not seen to change, so a deadline that
    /// stops them does not make them pending.
    pub(crate) verify: Vec<WalkedFile>,
    /// Files the walk admitted last time that are gone now (deleted,
    /// renamed away, replaced by a directory) or that it now leaves out.
    pub(crate) gone: Vec<String>,
    /// Whether the tree changed (and so must be persisted again).
    pub(crate) tree_changed: bool,
}

/// `root/rel`, `root` itself for `""` (no trailing separator).
fn abs_of(root: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// Paths per shard of a stat pass. The paths are cut into shards that the
/// threads take one at a time, so a thread that the scheduler holds back
/// (a busy machine, another process on its core) leaves its share to the
/// others instead of making the whole pass wait for its half; a shard
/// costs one open per directory level above its first path.
const SHARD: usize = 1024;

/// `work` over `0..len` cut into shards of `shard` items, on up to
/// `threads` threads (the caller's among them) taking the next shard as
/// they finish one; the results in shard order, `None` for a shard whose
/// work panicked (the others are kept). On the caller's thread alone when
/// there is one shard. Also the embedding pass's (`semantic.rs`): the
/// results come back in shard order whatever thread ran which shard, so
/// what is built from them does not depend on scheduling.
pub(crate) fn in_shards<R: Send>(
    len: usize,
    shard: usize,
    threads: usize,
    work: impl Fn(std::ops::Range<usize>) -> R + Sync,
) -> Vec<(std::ops::Range<usize>, Option<R>)> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let shard = shard.max(1);
    let count = len.div_ceil(shard);
    let range = |i: usize| i * shard..((i + 1) * shard).min(len);
    let run =
        |i: usize| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(range(i)))).ok();
    if count <= 1 || threads <= 1 {
        return (0..count).map(|i| (range(i), run(i))).collect();
    }
    let next = AtomicUsize::new(0);
    let drain = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                return done;
            }
            if let Some(r) = run(i) {
                done.push((i, r));
            }
        }
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads.min(count))
            .map(|_| scope.spawn(drain))
            .collect();
        let mut done = drain();
        for helper in helpers {
            done.extend(helper.join().unwrap_or_default());
        }
        done
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    let mut done = done.into_iter().peekable();
    (0..count)
        .map(|i| {
            let r = done.next_if(|(j, _)| *j == i).map(|(_, r)| r);
            (range(i), r)
        })
        .collect()
}

/// The stamps of `root/rel` for every `rel`, on up to `threads` threads.
/// Paths in order (as the tree keeps them) share their directory with
/// their neighbours, which [`stat_run`] exploits.
fn stat_all(root: &Path, rels: &[&str], threads: usize) -> Vec<Option<Stamp>> {
    let mut out = Vec::with_capacity(rels.len());
    for (range, stamps) in in_shards(rels.len(), SHARD, threads, |range| {
        let mut stamps: Vec<Option<Stamp>> = vec![None; range.len()];
        let paths = rels.get(range).unwrap_or_default();
        #[cfg(target_os = "linux")]
        stat_run(root, paths, &mut stamps, |_, _| {});
        #[cfg(not(target_os = "linux"))]
        stat_run(root, paths, &mut stamps);
        stamps
    }) {
        // A shard whose thread panicked: its paths read as gone, which
        // sends them to a closer look, never to a stale answer.
        out.extend(stamps.unwrap_or_else(|| vec![None; range.len()]));
    }
    out
}

/// [`stat_all`] on one thread: every entry is stat'ed relative to its open
/// directory, so the kernel resolves one name per file instead of its
/// whole path (most of the cost of a full-path `lstat` on a deep tree).
/// Paths in order are a depth-first walk, so the open directories form a
/// stack of ancestors and each is opened once, relative to its parent.
/// `on_open` sees each directory opened (not the root) that is a real
/// directory, not a symlink to one, with its open handle.
#[cfg(target_os = "linux")]
fn stat_run(
    root: &Path,
    rels: &[&str],
    out: &mut [Option<Stamp>],
    mut on_open: impl FnMut(&str, &std::os::fd::OwnedFd),
) {
    use rustix::fs::{open, openat, statat, AtFlags, Mode, OFlags};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut stack: Vec<(&str, Option<std::os::fd::OwnedFd>)> = Vec::new();
    for (rel, slot) in rels.iter().zip(out) {
        let (dir, name) = match rel.rsplit_once('/') {
            Some(split) => split,
            None if rel.is_empty() => {
                *slot = Stamp::at(root);
                continue;
            }
            None => ("", *rel),
        };
        while stack.last().is_some_and(|(d, _)| !ancestor_or_self(d, dir)) {
            stack.pop();
        }
        if stack.is_empty() {
            stack.push(("", open(root, flags, Mode::empty()).ok()));
        }
        // Down one component at a time from the nearest open ancestor: in
        // depth-first order each directory is then opened once, by one
        // name, and its subdirectories relative to it (a full path would
        // be resolved again from the root for every directory).
        while let Some((top, top_fd)) = stack.last().filter(|(d, _)| *d != dir) {
            let start = if top.is_empty() { 0 } else { top.len() + 1 };
            let end = dir[start..].find('/').map_or(dir.len(), |i| start + i);
            let (next, name) = (&dir[..end], &dir[start..end]);
            let fd = match top_fd {
                // Not through a final symlink first, so that a handle that
                // opens is the directory's own (its stamp an `lstat`);
                // then as a full-path `lstat` of the files would resolve it.
                Some(top_fd) => match openat(top_fd, name, flags | OFlags::NOFOLLOW, Mode::empty())
                {
                    Ok(fd) => {
                        on_open(next, &fd);
                        Some(fd)
                    }
                    Err(_) => openat(top_fd, name, flags, Mode::empty()).ok(),
                },
                // Nothing below an ancestor that cannot be opened can be stat'ed.
                None => None,
            };
            stack.push((next, fd));
        }
        *slot = stack
            .last()
            .and_then(|(_, fd)| fd.as_ref())
            .and_then(|fd| statat(fd, name, AtFlags::SYMLINK_NOFOLLOW).ok())
            .map(|st| Stamp::of_stat(&st));
    }
}

/// The stamps of every known directory and file (both in the tree's
/// order), on up to `threads` threads. A directory the file stats open
/// anyway is stamped from that open handle (`fstat`: no name to resolve),
/// which spares each directory holding files a second open and a
/// by-name stat; only the others are stat'ed by name afterwards.
#[cfg(target_os = "linux")]
fn stat_tree(
    root: &Path,
    dirs: &[&str],
    files: &[&str],
    threads: usize,
) -> (Vec<Option<Stamp>>, Vec<Option<Stamp>>) {
    stat_tree_in(root, dirs, files, threads, SHARD)
}

/// [`stat_tree`] with shards of `shard` files (tests vary it).
#[cfg(target_os = "linux")]
fn stat_tree_in(
    root: &Path,
    dirs: &[&str],
    files: &[&str],
    threads: usize,
    shard: usize,
) -> (Vec<Option<Stamp>>, Vec<Option<Stamp>>) {
    let mut file_stamps = Vec::with_capacity(files.len());
    let mut dir_stamps: Vec<Option<Option<Stamp>>> = vec![None; dirs.len()];
    for (range, run) in in_shards(files.len(), shard, threads, |range| {
        let mut stamps: Vec<Option<Stamp>> = vec![None; range.len()];
        let mut seen = Vec::new();
        let paths = files.get(range).unwrap_or_default();
        stat_run(root, paths, &mut stamps, |dir, fd| {
            // The tree's directories are in sorted order.
            if let Ok(i) = dirs.binary_search(&dir) {
                if let Ok(st) = rustix::fs::fstat(fd) {
                    seen.push((i, Stamp::of_stat(&st)));
                }
            }
        });
        (stamps, seen)
    }) {
        let (stamps, seen) = run.unwrap_or_else(|| (vec![None; range.len()], Vec::new()));
        file_stamps.extend(stamps);
        for (i, stamp) in seen {
            if let Some(slot) = dir_stamps.get_mut(i) {
                *slot = Some(Some(stamp));
            }
        }
    }
    let rest: Vec<usize> = (0..dirs.len())
        .filter(|i| dir_stamps.get(*i).is_some_and(Option::is_none))
        .collect();
    let rels: Vec<&str> = rest.iter().filter_map(|i| dirs.get(*i).copied()).collect();
    for (i, stamp) in rest.into_iter().zip(stat_all(root, &rels, threads)) {
        if let Some(slot) = dir_stamps.get_mut(i) {
            *slot = Some(stamp);
        }
    }
    (
        dir_stamps.into_iter().map(Option::flatten).collect(),
        file_stamps,
    )
}

/// [`stat_tree`] where stats are by full path: every path on its own.
#[cfg(not(target_os = "linux"))]
fn stat_tree(
    root: &Path,
    dirs: &[&str],
    files: &[&str],
    threads: usize,
) -> (Vec<Option<Stamp>>, Vec<Option<Stamp>>) {
    (
        stat_all(root, dirs, threads),
        stat_all(root, files, threads),
    )
}

/// Whether directory `a` is `b` or contains it (`""` is the root).
#[cfg(target_os = "linux")]
fn ancestor_or_self(a: &str, b: &str) -> bool {
    a.is_empty() || a == b || (b.starts_with(a) && b.as_bytes().get(a.len()) == Some(&b'/'))
}

/// [`stat_all`] on one thread, by full paths.
#[cfg(not(target_os = "linux"))]
fn stat_run(root: &Path, rels: &[&str], out: &mut [Option<Stamp>]) {
    let mut buf = PathBuf::with_capacity(root.as_os_str().len() + 128);
    for (rel, slot) in rels.iter().zip(out) {
        buf.as_mut_os_string().clear();
        buf.push(root);
        if !rel.is_empty() {
            buf.push(rel);
        }
        *slot = Stamp::at(&buf);
    }
}

/// Walk in full and remember the tree the walk saw, every stamp taken
/// after the walk (see [`crate::tree`] on why that is safe). No tree when
/// a path the walk met cannot be named by its `/`-separated string (not
/// UTF-8): the quick check would find it gone, so every check walks.
pub(crate) fn full_scan(
    root: &Path,
    options: &WalkOptions,
    scan_start_ns: i64,
    threads: usize,
) -> (Walk, Option<Tree>) {
    let walked = walk_under(root, root, None, options);
    if walked.files.iter().any(|f| f.abs_path.to_str().is_none()) {
        return (walked, None);
    }
    let mut tree = Tree {
        walk: (options.max_file_bytes, options.include_secrets),
        ..Tree::default()
    };
    let dirs: Vec<&str> = walked.dirs.iter().map(String::as_str).collect();
    for (dir, stamp) in dirs.iter().zip(stat_all(root, &dirs, threads)) {
        // A directory gone since the walk: its files are gone too, and the
        // next check finds them so.
        if let Some(stamp) = stamp.filter(Stamp::is_dir) {
            tree.dirs
                .insert((*dir).to_owned(), stamp.settled(scan_start_ns));
        }
    }
    let files: Vec<(&str, Option<crate::SkipReason>)> = walked
        .files
        .iter()
        .map(|f| (f.rel_path.as_str(), None))
        .chain(walked.skipped.iter().map(|(p, r)| (p.as_str(), Some(*r))))
        .collect();
    let rels: Vec<&str> = files.iter().map(|(p, _)| *p).collect();
    for ((rel, skipped), stamp) in files.iter().zip(stat_all(root, &rels, threads)) {
        tree.files.insert(
            (*rel).to_owned(),
            KnownFile::seen(stamp, scan_start_ns, *skipped),
        );
    }
    let ignore_files: Vec<String> = walked
        .dirs
        .iter()
        .flat_map(|d| {
            IGNORE_FILE_NAMES.iter().map(move |n| match d.as_str() {
                "" => (*n).to_owned(),
                d => format!("{d}/{n}"),
            })
        })
        .collect();
    let rels: Vec<&str> = ignore_files.iter().map(String::as_str).collect();
    for (rel, stamp) in rels.iter().zip(stat_all(root, &rels, threads)) {
        if stamp.is_some() {
            tree.rules
                .insert(root.join(rel), RulesFile::observed(stamp, scan_start_ns));
        }
    }
    for path in Tree::outer_rules_files(root) {
        let now = Stamp::at(&path);
        tree.rules
            .insert(path, RulesFile::observed(now, scan_start_ns));
    }
    // A left-out file or a directory whose name is not UTF-8 shows only in
    // its lossy string, which names nothing on disk.
    let lossy = walked
        .dirs
        .iter()
        .chain(walked.skipped.iter().map(|(p, _)| p))
        .any(|p| p.contains(char::REPLACEMENT_CHARACTER));
    (walked, (!lossy).then_some(tree))
}

/// Bring `tree` up to date with the files and say what changed, or `None`
/// when only a full walk can tell (an ignore-rules file changed, appeared
/// or is unsettled). On `None` the tree is left half-updated: the caller
/// replaces it with the full walk's.
pub(crate) fn quick_scan(
    root: &Path,
    tree: &mut Tree,
    options: &WalkOptions,
    scan_start_ns: i64,
    threads: usize,
) -> Option<Delta> {
    if tree.walk != (options.max_file_bytes, options.include_secrets) {
        return None; // verdicts reached under other options
    }
    let mut delta = Delta::default();
    // One parallel pass of stats over every known directory and file.
    // Only the paths whose stamp differs are copied out of the tree (to
    // update it): on an unchanged tree, nothing is.
    let (dirs, files) = {
        let dir_rels: Vec<&str> = tree.dirs.keys().map(String::as_str).collect();
        let file_rels: Vec<&str> = tree.files.keys().map(String::as_str).collect();
        let (dir_stamps, file_stamps) = stat_tree(root, &dir_rels, &file_rels, threads);
        // The stamps are in the maps' order: compared by walking the maps
        // again, not by looking every path up.
        let dirs: Vec<(String, Option<Stamp>)> = tree
            .dirs
            .iter()
            .zip(dir_stamps)
            .filter(
                |((_, was), now)| !matches!((was, now), (Some(s), Some(n)) if s == n && n.is_dir()),
            )
            .map(|((rel, _), now)| (rel.clone(), now))
            .collect();
        let files: Vec<(String, Option<Stamp>)> = tree
            .files
            .iter()
            .zip(file_stamps)
            .filter(|((_, known), now)| known.freshness(*now) != Freshness::Same)
            .map(|((rel, _), now)| (rel.clone(), now))
            .collect();
        (dirs, files)
    };

    let mut relist: Vec<&str> = Vec::new();
    for (dir, now) in &dirs {
        match now.filter(Stamp::is_dir) {
            None => {
                // Gone (its files are found gone one by one below); the
                // rules it held no longer apply to anything.
                tree.dirs.remove(dir);
                let abs = abs_of(root, dir);
                tree.rules.retain(|p, _| p.parent() != Some(abs.as_path()));
                delta.tree_changed = true;
            }
            Some(now) => {
                // The stamp taken before the listing is the one kept: a
                // change during the listing then shows next time.
                tree.dirs.insert(dir.clone(), now.settled(scan_start_ns));
                relist.push(dir);
                delta.tree_changed = true;
            }
        }
    }
    if !tree.rules.iter().all(|(p, r)| r.holds(Stamp::at(p))) {
        return None;
    }
    for dir in relist {
        let abs = abs_of(root, dir);
        for name in IGNORE_FILE_NAMES {
            let path = abs.join(name);
            if !tree.rules.contains_key(&path) && Stamp::at(&path).is_some() {
                return None; // a new ignore file
            }
        }
        let listed = walk_under(root, &abs, Some(1), options);
        for sub in listed.dirs.iter().filter(|d| *d != dir) {
            if !tree.dirs.contains_key(sub) {
                add_subtree(root, sub, tree, options, scan_start_ns, &mut delta);
            }
        }
        note_new_files(root, &listed, tree, scan_start_ns, &mut delta);
    }
    // Known files: only a changed stamp needs a verdict.
    for (rel, now) in files {
        let Some(known) = tree.files.get_mut(&rel) else {
            continue;
        };
        match known.freshness(now) {
            Freshness::Same => continue,
            Freshness::Verify => {
                // Looked at again from now on only if still unsettled.
                known.settled = now.is_some_and(|s| s.settled(scan_start_ns).is_some());
                delta.tree_changed = true;
                if known.skipped.is_none() {
                    // Left-out files are judged by their stamp alone.
                    delta.verify.push(walked_file(root, &rel, now));
                }
                continue;
            }
            Freshness::Changed => {}
        }
        delta.tree_changed = true;
        let was_admitted = known.skipped.is_none();
        let abs = root.join(&rel);
        let meta = std::fs::symlink_metadata(&abs)
            .ok()
            .filter(|m| !m.file_type().is_dir());
        let Some(meta) = meta else {
            tree.files.remove(&rel);
            if was_admitted {
                delta.gone.push(rel);
            }
            continue;
        };
        let stamp = Some(Stamp::of(&meta));
        let symlink = meta.file_type().is_symlink();
        match verdict(root, options, &abs, rel.clone(), symlink, Some(&meta)) {
            Ok(file) => {
                tree.files
                    .insert(rel.clone(), KnownFile::seen(stamp, scan_start_ns, None));
                delta.candidates.push(file);
            }
            Err((_, reason)) => {
                tree.files.insert(
                    rel.clone(),
                    KnownFile::seen(stamp, scan_start_ns, Some(reason)),
                );
                if was_admitted {
                    delta.gone.push(rel);
                }
            }
        }
    }
    delta.gone.sort();
    delta.verify.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    delta.candidates.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    Some(delta)
}

/// The walk's record of a known admitted file whose stamp is `now`.
fn walked_file(root: &Path, rel: &str, now: Option<Stamp>) -> WalkedFile {
    WalkedFile {
        rel_path: rel.to_owned(),
        abs_path: abs_of(root, rel),
        size: now.map_or(0, |s| s.size()),
        mtime: now.map(|s| s.modified()),
    }
}

/// A directory that appeared: walk it whole and remember all of it.
fn add_subtree(
    root: &Path,
    rel: &str,
    tree: &mut Tree,
    options: &WalkOptions,
    scan_start_ns: i64,
    delta: &mut Delta,
) {
    let abs = root.join(rel);
    let walked = walk_under(root, &abs, None, options);
    for dir in &walked.dirs {
        let dir_abs = root.join(dir);
        // Stamped after the walk: a change during it is then unsettled.
        if let Some(stamp) = Stamp::at(&dir_abs).filter(Stamp::is_dir) {
            tree.dirs.insert(dir.clone(), stamp.settled(scan_start_ns));
            tree.note_ignore_files_in(&dir_abs, scan_start_ns);
        }
    }
    note_new_files(root, &walked, tree, scan_start_ns, delta);
    delta.tree_changed = true;
}

/// Remember the files of a listing not known yet; admitted ones are read.
fn note_new_files(
    root: &Path,
    listed: &Walk,
    tree: &mut Tree,
    scan_start_ns: i64,
    delta: &mut Delta,
) {
    for file in &listed.files {
        if tree.files.contains_key(&file.rel_path) {
            continue; // known: judged by its own stamp
        }
        tree.files.insert(
            file.rel_path.clone(),
            KnownFile::seen(Stamp::at(&file.abs_path), scan_start_ns, None),
        );
        delta.candidates.push(file.clone());
        delta.tree_changed = true;
    }
    for (rel, reason) in &listed.skipped {
        if tree.files.contains_key(rel) {
            continue;
        }
        tree.files.insert(
            rel.clone(),
            KnownFile::seen(Stamp::at(&root.join(rel)), scan_start_ns, Some(*reason)),
        );
        delta.tree_changed = true;
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
