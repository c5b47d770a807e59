//! What loading set aside without failing: settings of a workspace file
//! that were not honoured, and files that were not read. Front ends show
//! each once (`cgp` prints them on stderr).

use std::path::PathBuf;

use serde::Serialize;

/// One thing loading set aside, with where and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigWarning {
    /// The file concerned.
    pub path: PathBuf,
    /// The 1-based line, when the warning is about one setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// What was set aside, why, and the fix.
    pub message: String,
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}
