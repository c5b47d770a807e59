//! The localization benchmark's cases (issue 27, `benches/localization.rs`):
//! for a sampled commit C of a repository, the query is C's subject with
//! issue and pull-request references stripped, the index is built at C's
//! parent, and the answer is the code files C changed. Here so that its
//! rules are tested (`tests/it/localization.rs`); not used by the provider.

use git2::{Delta, Oid, Repository, Sort};

use crate::record::Change;

/// One benchmark case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The commit C.
    pub commit: Oid,
    /// Its (first and only) parent, where the index is built.
    pub parent: Oid,
    /// C's subject, references stripped.
    pub query: String,
    /// The code files C changed (paths at C; deletions left out).
    pub answers: Vec<String>,
    /// C's committer time (the `as_of` of the history side is just before it).
    pub commit_time: i64,
}

/// Why a commit cannot be a case.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LoaderError {
    /// The commit's parent is not in the repository (a shallow clone, a
    /// pruned object): the index cannot be built at it.
    #[error("commit {commit}: its parent {parent} is not in the repository (shallow clone or missing object); the index cannot be built at the parent")]
    MissingParent {
        /// The commit.
        commit: String,
        /// The parent named by the commit.
        parent: String,
    },
    /// Reading the repository failed.
    #[error("commit {commit}: {message}")]
    Git {
        /// The commit (or `HEAD`).
        commit: String,
        /// What libgit2 said.
        message: String,
    },
}

/// Extensions counted as code.
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "py", "go", "ts", "tsx", "js", "mjs", "cjs", "jsx", "java", "kt", "c", "h", "cc", "cpp",
    "hpp", "rb", "swift", "cs", "php", "scala",
];

/// Subject words of commits that are no localization task.
const EXCLUDED_SUBJECTS: &[&str] = &[
    "bump",
    "release",
    "version",
    "changelog",
    "format",
    "formatting",
    "reformat",
    "rustfmt",
    "fmt",
    "prettier",
    "black",
    "lint",
    "typo",
    "merge",
    "revert",
];

/// Whether `path` is a code file (by extension).
pub fn is_code(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| CODE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// `subject` with issue and pull-request references removed: `(#123)`,
/// `#123`, `GH-123`, `fixes #1`, trailing punctuation left over.
pub fn strip_references(subject: &str) -> String {
    let mut words: Vec<&str> = Vec::new();
    for w in subject.split_whitespace() {
        let bare = w.trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | ',' | '.' | ':'));
        let is_ref = bare
            .strip_prefix('#')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            || bare
                .to_ascii_lowercase()
                .strip_prefix("gh-")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if is_ref {
            // "fixes #12": the verb goes with its reference.
            if matches!(
                words.last().map(|l| l.to_ascii_lowercase()).as_deref(),
                Some("fixes" | "fix" | "closes" | "close" | "resolves" | "see" | "refs")
            ) {
                words.pop();
            }
            continue;
        }
        words.push(w);
    }
    words
        .join(" ")
        .trim_end_matches([' ', ',', ':', '-'])
        .to_owned()
}

/// Commit `id` as a case: `Ok(None)` when it is no task by the rules (a
/// merge, a root commit, a version bump or reformat, not 1–10 code files);
/// an error when its parent is missing.
pub fn case_of(repo: &Repository, id: Oid) -> Result<Option<Case>, LoaderError> {
    let git = |e: git2::Error| LoaderError::Git {
        commit: id.to_string(),
        message: e.message().to_owned(),
    };
    let commit = repo.find_commit(id).map_err(git)?;
    if commit.parent_count() != 1 {
        return Ok(None);
    }
    let parent_id = commit.parent_id(0).map_err(git)?;
    let parent = repo
        .find_commit(parent_id)
        .map_err(|_| LoaderError::MissingParent {
            commit: id.to_string(),
            parent: parent_id.to_string(),
        })?;
    let subject = commit.summary().unwrap_or("").to_owned();
    let lower = subject.to_ascii_lowercase();
    if lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| EXCLUDED_SUBJECTS.contains(&w))
    {
        return Ok(None);
    }
    let query = strip_references(&subject);
    if query.split_whitespace().count() < 2 {
        return Ok(None);
    }
    let tree = commit.tree().map_err(git)?;
    let parent_tree = parent.tree().map_err(git)?;
    let diff = repo
        .diff_tree_to_tree(Some(&parent_tree), Some(&tree), None)
        .map_err(git)?;
    let mut answers = Vec::new();
    let mut code_changed = 0usize;
    for d in diff.deltas() {
        let (path, change) = match d.status() {
            Delta::Added => (d.new_file().path(), Change::Added),
            Delta::Deleted => (d.old_file().path(), Change::Deleted),
            _ => (d.new_file().path(), Change::Modified),
        };
        let Some(path) = path.map(|p| p.to_string_lossy().into_owned()) else {
            continue;
        };
        if !is_code(&path) {
            continue;
        }
        code_changed += 1;
        // An added file cannot be found in the parent's index; a deleted
        // one counts as touched but is no answer either.
        if change == Change::Modified {
            answers.push(path);
        }
    }
    if !(1..=10).contains(&code_changed) || answers.is_empty() {
        return Ok(None);
    }
    Ok(Some(Case {
        commit: id,
        parent: parent_id,
        query,
        answers,
        commit_time: commit.time().seconds(),
    }))
}

/// Up to `max` cases of the repository, spread evenly over its history
/// (newest first), skipping commits that are no task. A commit whose parent
/// is missing is an error, never a silently smaller sample.
pub fn load_cases(repo: &Repository, max: usize) -> Result<Vec<Case>, LoaderError> {
    let head = |e: git2::Error| LoaderError::Git {
        commit: "HEAD".into(),
        message: e.message().to_owned(),
    };
    let mut walk = repo.revwalk().map_err(head)?;
    walk.set_sorting(Sort::TIME).map_err(head)?;
    walk.push_head().map_err(head)?;
    walk.simplify_first_parent().map_err(head)?;
    let ids: Vec<Oid> = walk.collect::<Result<_, _>>().map_err(head)?;
    let mut candidates = Vec::new();
    for id in &ids {
        if let Some(c) = case_of(repo, *id)? {
            candidates.push(c);
        }
    }
    if candidates.len() <= max {
        return Ok(candidates);
    }
    let step = candidates.len() as f64 / max as f64;
    Ok((0..max)
        .filter_map(|i| candidates.get((i as f64 * step) as usize).cloned())
        .collect())
}
