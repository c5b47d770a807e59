//! The commit a checkout is at, read from its `.git` without running git.
//!
//! A replica must refuse to serve a checkout at another commit than its
//! artifact describes, and a build machine or a replica may have no `git`
//! on its path (a container image with the checkout copied in). So `HEAD`
//! is resolved by hand: `.git` is a directory, or a file `gitdir: PATH`
//! (a worktree or a submodule); `HEAD` holds a commit id or `ref: NAME`;
//! a ref is a loose file under the common directory (`commondir` for a
//! worktree) or a line of `packed-refs`. Every file read is bounded (a
//! hostile checkout cannot make us read a huge `HEAD`), symbolic refs
//! are followed a few levels at most, and a commit id must be 40 (SHA-1)
//! or 64 (SHA-256) lowercase hex digits. A directory with no `.git` is
//! "no commit", which is a state an artifact records too.

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// What a checkout's `HEAD` names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Commit {
    /// Not a git working tree (no `.git` in the directory).
    None,
    /// A git commit.
    Git {
        /// The commit id (40 or 64 lowercase hex digits).
        id: String,
        /// The branch `HEAD` pointed to (`refs/heads/main`), when not detached.
        head: Option<String>,
    },
}

impl Commit {
    /// The commit id, when there is one.
    pub fn id(&self) -> Option<&str> {
        match self {
            Commit::None => None,
            Commit::Git { id, .. } => Some(id),
        }
    }

    /// Whether `other` is the same commit (the branch name does not
    /// matter: a replica checks out the commit, often detached).
    pub fn same_commit(&self, other: &Commit) -> bool {
        self.id() == other.id()
    }
}

impl std::fmt::Display for Commit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Commit::None => f.write_str("no commit (not a git checkout)"),
            Commit::Git { id, head: Some(h) } => write!(f, "commit {id} ({h})"),
            Commit::Git { id, head: None } => write!(f, "commit {id} (detached)"),
        }
    }
}

/// Why `HEAD` could not be resolved.
#[derive(Debug, thiserror::Error)]
#[error("cannot tell which commit {} is at: {why}; check the checkout with `git status` (or build the artifact from a plain directory)", dir.display())]
pub struct CommitError {
    /// The checkout.
    pub dir: PathBuf,
    /// What went wrong.
    pub why: String,
}

/// Largest `HEAD`, `.git` file, `commondir` or loose ref read.
const SMALL_FILE_LIMIT: u64 = 4 * 1024;

/// Largest `packed-refs` read (a repository with a hundred thousand tags
/// fits; anything larger is refused rather than read whole).
const PACKED_REFS_LIMIT: u64 = 64 * 1024 * 1024;

/// How many symbolic refs are followed before giving up (git's own limit is 5).
const MAX_SYMREF_DEPTH: usize = 5;

/// The commit the checkout at `dir` is at.
pub fn head_commit(dir: &Path) -> Result<Commit, CommitError> {
    let fail = |why: String| CommitError {
        dir: dir.to_path_buf(),
        why,
    };
    let dot_git = dir.join(".git");
    let meta = match std::fs::metadata(&dot_git) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Commit::None),
        Err(e) => return Err(fail(format!("{}: {e}", dot_git.display()))),
    };
    let git_dir = if meta.is_dir() {
        dot_git
    } else {
        let text = read_small(&dot_git, SMALL_FILE_LIMIT).map_err(&fail)?;
        let target = text.trim_end().strip_prefix("gitdir: ").ok_or_else(|| {
            fail(format!(
                "{} is neither a directory nor a `gitdir:` file",
                dot_git.display()
            ))
        })?;
        let target = Path::new(target);
        if target.is_absolute() {
            target.to_path_buf()
        } else {
            dir.join(target)
        }
    };
    // Refs live in the common directory (the main repository's `.git` for
    // a worktree); HEAD lives in the worktree's own.
    let common = match read_small(&git_dir.join("commondir"), SMALL_FILE_LIMIT) {
        Ok(text) => {
            let c = Path::new(text.trim_end());
            if c.is_absolute() {
                c.to_path_buf()
            } else {
                git_dir.join(c)
            }
        }
        Err(_) => git_dir.clone(),
    };
    let head = read_small(&git_dir.join("HEAD"), SMALL_FILE_LIMIT).map_err(&fail)?;
    let mut content = head.trim_end().to_owned();
    let mut branch = None;
    for _ in 0..=MAX_SYMREF_DEPTH {
        let Some(name) = content.strip_prefix("ref: ") else {
            return commit_id(&content)
                .map(|id| Commit::Git {
                    id,
                    head: branch.clone(),
                })
                .ok_or_else(|| {
                    fail(format!(
                        "HEAD resolves to {:?}, which is not a commit id",
                        bounded(&content)
                    ))
                });
        };
        let name = name.trim().to_owned();
        if !is_ref_name(&name) {
            return Err(fail(format!(
                "HEAD names {:?}, which is not a ref",
                bounded(&name)
            )));
        }
        branch.get_or_insert_with(|| name.clone());
        content = resolve_ref(&git_dir, &common, &name)
            .map_err(&fail)?
            .ok_or_else(|| {
                fail(format!(
                    "{name} does not exist yet (a repository with no commit); commit first"
                ))
            })?;
    }
    Err(fail(format!(
        "more than {MAX_SYMREF_DEPTH} symbolic refs from HEAD"
    )))
}

/// The content of ref `name`: its loose file (in the worktree's directory
/// first for per-worktree refs, then the common one), else its line of
/// `packed-refs`; `None` when it exists nowhere.
fn resolve_ref(git_dir: &Path, common: &Path, name: &str) -> Result<Option<String>, String> {
    for base in [git_dir, common] {
        match read_small(&base.join(name), SMALL_FILE_LIMIT) {
            Ok(text) => return Ok(Some(text.trim_end().to_owned())),
            Err(_) if !base.join(name).exists() => {}
            Err(why) => return Err(why),
        }
    }
    let packed = common.join("packed-refs");
    let text = match read_small(&packed, PACKED_REFS_LIMIT) {
        Ok(text) => text,
        Err(_) if !packed.exists() => return Ok(None),
        Err(why) => return Err(why),
    };
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
        .find_map(|l| {
            let (id, ref_name) = l.split_once(' ')?;
            (ref_name == name).then(|| id.to_owned())
        }))
}

/// `text` when it is a commit id: 40 or 64 lowercase hex digits.
fn commit_id(text: &str) -> Option<String> {
    let ok = matches!(text.len(), 40 | 64)
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    ok.then(|| text.to_owned())
}

/// A ref name we are willing to join onto a directory: `refs/…`, no `..`
/// component, no absolute path, no NUL or backslash.
fn is_ref_name(name: &str) -> bool {
    name.starts_with("refs/")
        && name.len() <= 1024
        && !name
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
        && !name.contains(['\0', '\\'])
}

/// The file at `path` as UTF-8, refused when larger than `limit` bytes.
fn read_small(path: &Path, limit: u64) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{} is larger than {limit} bytes", path.display()));
    }
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8", path.display()))
}

/// At most 80 characters of peer text, for an error message.
fn bounded(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
#[path = "commit_tests.rs"]
mod tests;
