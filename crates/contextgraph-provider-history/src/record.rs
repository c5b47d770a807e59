//! What the history index remembers of one commit.

use serde::{Deserialize, Serialize};

/// How a commit changed one path (against its first parent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Change {
    /// The path was added.
    Added,
    /// The path's content changed.
    Modified,
    /// The path was deleted.
    Deleted,
    /// The path was renamed (the old path is in [`ChangedPath::from`]).
    Renamed,
}

impl Change {
    /// The one-letter code `git show --name-status` prints.
    pub fn letter(self) -> char {
        match self {
            Change::Added => 'A',
            Change::Modified => 'M',
            Change::Deleted => 'D',
            Change::Renamed => 'R',
        }
    }
}

/// One path a commit changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedPath {
    /// The path after the commit (for a deletion, the deleted path).
    pub path: String,
    /// For a rename, the path before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// How it changed.
    pub change: Change,
}

/// One indexed commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitRecord {
    /// The full commit id (40 lowercase hex digits for SHA-1).
    pub id: String,
    /// The author's name (never the e-mail address: it is not needed to
    /// read history, and it is personal data).
    pub author: String,
    /// Author time, seconds since the Unix epoch (the frame's `valid_from`).
    pub author_time: i64,
    /// Committer time, seconds since the Unix epoch (the frame's
    /// `recorded_at`: when the change entered this history).
    pub commit_time: i64,
    /// The message's first line.
    pub subject: String,
    /// The rest of the message, cut at [`crate::limits::MAX_BODY_BYTES`].
    pub body: String,
    /// Number of parents (a merge has two or more; its paths are empty).
    pub parents: u32,
    /// The paths changed against the first parent, secrets left out.
    pub paths: Vec<ChangedPath>,
    /// Paths left out of [`paths`](Self::paths) because they are secrets
    /// (their names are not kept).
    pub withheld: u32,
    /// The message holds a secret: the commit is never served.
    pub refused: bool,
    /// The commit is the boundary of a shallow clone: its parents are not
    /// in the repository, so what it changed is unknown.
    pub boundary: bool,
}

impl CommitRecord {
    /// The abbreviated id people read (12 hex digits, as `git log --oneline`
    /// abbreviates in large repositories).
    pub fn short_id(&self) -> &str {
        self.id.get(..12).unwrap_or(&self.id)
    }
}
