//! Building the history index from the repository: a walk from `HEAD`
//! (newest first), one tree diff per commit against its first parent,
//! incremental over a previous index whose head is still an ancestor.

use std::collections::HashSet;
use std::path::Path;

use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Repository, Sort};

use crate::error::HistoryError;
use crate::gate::{indexable_path, text_is_refused};
use crate::limits::{MAX_BODY_BYTES, MAX_INDEXED_COMMITS, MAX_PATHS_PER_COMMIT};
use crate::record::{Change, ChangedPath, CommitRecord};
use crate::store::Snapshot;

/// What an index build did, for notes and benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildReport {
    /// Commits read in this build (0 when the stored index was current).
    pub commits_read: usize,
    /// Whether the build started from the stored index (only new commits read).
    pub incremental: bool,
    /// Commits that could not be read (missing objects), skipped.
    pub unreadable: Vec<String>,
}

/// The commit `HEAD` names, when it names one (`None`: an unborn branch,
/// or a `HEAD` that does not resolve; [`build`] says which).
pub fn head_id(repo: &Repository) -> Option<Oid> {
    repo.head().ok()?.peel_to_commit().ok().map(|c| c.id())
}

/// The commits `HEAD` reaches, newest first, starting from `previous`
/// when its head is an ancestor of `HEAD` (then only the new commits are
/// read). `None` when the repository has no commit yet.
pub fn build(
    repo: &Repository,
    workdir: &Path,
    previous: Option<Snapshot>,
    cap: usize,
) -> Result<Option<(Snapshot, BuildReport)>, HistoryError> {
    let head = match repo.head() {
        Ok(h) => h,
        // An unborn branch (a fresh `git init`): no history yet.
        Err(e)
            if e.code() == git2::ErrorCode::UnbornBranch
                || e.code() == git2::ErrorCode::NotFound =>
        {
            return Ok(None)
        }
        Err(e) => return Err(HistoryError::git(workdir, "reading HEAD", &e)),
    };
    let head_id = head
        .peel_to_commit()
        .map_err(|e| HistoryError::git(workdir, "resolving HEAD to a commit", &e))?
        .id();
    let shallow = shallow_boundary(repo);
    let mut report = BuildReport::default();
    let base = previous.filter(|p| {
        let Ok(old) = Oid::from_str(&p.head) else {
            return false;
        };
        old == head_id || repo.graph_descendant_of(head_id, old).unwrap_or(false)
    });
    let base = match base {
        // Up to date: the stored snapshot as it is (moved, not copied: it
        // holds every commit).
        Some(p) if p.head == head_id.to_string() => return Ok(Some((p, report))),
        other => other,
    };
    if base.is_some() {
        report.incremental = true;
    }
    // libgit2 re-hashes every object it reads to check it against its id
    // (SHA-1 with collision detection). A tree diff reads both trees of
    // every directory on the changed paths, and trees above 4 KiB are not
    // kept in libgit2's object cache, so a history with large directories
    // spent most of its cold build hashing (callgrind, 1,000 synthetic
    // commits in 400-entry directories: 57 % of all instructions). `git`
    // itself does not verify on read either (only `git fsck` does); the
    // pack's zlib stream still catches a damaged object; anyone who can
    // write the object store can also move `HEAD`, so the check guards
    // against no one. Process-wide, like every libgit2 option.
    git2::opts::strict_hash_verification(false);
    let mut walk = repo
        .revwalk()
        .map_err(|e| HistoryError::git(workdir, "starting the history walk", &e))?;
    walk.set_sorting(Sort::TIME)
        .map_err(|e| HistoryError::git(workdir, "sorting the history walk", &e))?;
    walk.push(head_id)
        .map_err(|e| HistoryError::git(workdir, format!("walking from HEAD {head_id}"), &e))?;
    if let Some(p) = &base {
        if let Ok(old) = Oid::from_str(&p.head) {
            walk.hide(old).map_err(|e| {
                HistoryError::git(workdir, format!("walking from the indexed head {old}"), &e)
            })?;
        }
    }
    let mut fresh: Vec<CommitRecord> = Vec::new();
    let mut truncated = base.as_ref().is_some_and(|b| b.truncated);
    for oid in walk {
        if fresh.len() >= cap {
            truncated = true;
            break;
        }
        let oid = match oid {
            Ok(o) => o,
            Err(e) => {
                // A parent object missing mid-walk: what was reached is kept.
                report.unreadable.push(format!("walk: {}", e.message()));
                break;
            }
        };
        match read_commit(repo, oid, shallow.contains(&oid)) {
            Ok(r) => fresh.push(r),
            Err(e) => report.unreadable.push(format!("{oid}: {}", e.message())),
        }
    }
    report.commits_read = fresh.len();
    let mut commits = fresh;
    let mut unreadable = report.unreadable.len() as u64;
    if let Some(b) = base {
        unreadable += b.unreadable;
        commits.extend(b.commits);
    }
    if commits.len() > cap {
        // The oldest go first: the newest history is what answers questions.
        commits.truncate(cap);
        truncated = true;
    }
    Ok(Some((
        Snapshot {
            head: head_id.to_string(),
            truncated,
            shallow: !shallow.is_empty(),
            unreadable,
            commits,
        },
        report,
    )))
}

/// The commits whose parents a shallow clone does not have
/// (`<git dir>/shallow`, one id per line); empty for a full clone.
pub fn shallow_boundary(repo: &Repository) -> HashSet<Oid> {
    let Ok(text) = std::fs::read_to_string(repo.path().join("shallow")) else {
        return HashSet::new();
    };
    text.lines()
        .filter_map(|l| Oid::from_str(l.trim()).ok())
        .collect()
}

/// One commit's record: message, times, and the paths changed against its
/// first parent (none for a merge or a shallow boundary).
pub(crate) fn read_commit(
    repo: &Repository,
    oid: Oid,
    boundary: bool,
) -> Result<CommitRecord, git2::Error> {
    let commit = repo.find_commit(oid)?;
    let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
    let (subject, body) = split_message(&message);
    let refused = text_is_refused("", &message);
    let author = commit.author();
    let parents = commit.parent_count() as u32;
    let mut paths = Vec::new();
    let mut withheld = 0u32;
    if parents <= 1 && !boundary {
        let tree = commit.tree()?;
        let parent_tree = if parents == 1 {
            Some(commit.parent(0)?.tree()?)
        } else {
            None
        };
        let mut opts = DiffOptions::new();
        opts.ignore_submodules(true);
        let mut diff =
            repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))?;
        let mut find = DiffFindOptions::new();
        find.renames(true);
        diff.find_similar(Some(&mut find))?;
        for delta in diff.deltas() {
            let new = delta
                .new_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned());
            let old = delta
                .old_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned());
            let (path, from, change) = match delta.status() {
                Delta::Added | Delta::Copied => (new, None, Change::Added),
                Delta::Deleted => (old, None, Change::Deleted),
                Delta::Renamed => (new, old, Change::Renamed),
                Delta::Modified | Delta::Typechange => (new, None, Change::Modified),
                _ => continue,
            };
            let Some(path) = path else { continue };
            let secret =
                !indexable_path(&path) || from.as_deref().is_some_and(|f| !indexable_path(f));
            if secret {
                withheld += 1;
                continue;
            }
            if paths.len() < MAX_PATHS_PER_COMMIT {
                paths.push(ChangedPath { path, from, change });
            }
        }
    }
    Ok(CommitRecord {
        id: oid.to_string(),
        author: String::from_utf8_lossy(author.name_bytes()).into_owned(),
        author_time: author.when().seconds(),
        commit_time: commit.time().seconds(),
        subject,
        body,
        parents,
        paths,
        withheld,
        refused,
        boundary,
    })
}

/// A message's subject (first line) and body (the rest, trimmed, cut at
/// [`MAX_BODY_BYTES`] on a character boundary).
pub fn split_message(message: &str) -> (String, String) {
    let message = message.trim();
    let (subject, body) = message.split_once('\n').unwrap_or((message, ""));
    let body = body.trim();
    let mut cut = body.len().min(MAX_BODY_BYTES);
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    (subject.trim().to_owned(), body[..cut].to_owned())
}

/// The default cap on commits one build indexes.
pub const DEFAULT_CAP: usize = MAX_INDEXED_COMMITS;
