//! Why a configuration could not be used. Every error names the file and,
//! when the problem is inside it, the line, column and key, and says what
//! to do. No error ever quotes a value from the file (a misplaced secret
//! must not end up in a terminal log).

use std::path::PathBuf;

/// A configuration problem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: cannot read the configuration: {source}; check the path and its permissions", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than any configuration should be.
    #[error("{}: the configuration is {bytes} bytes, over the {limit}-byte limit; is this the right file?", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A file that was asked for explicitly does not exist.
    #[error("{}: no such configuration file ({asked_by}); create it or point {asked_by} elsewhere", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
        /// Who named it: `--config` or `CGP_CONFIG`.
        asked_by: &'static str,
    },
    /// Something inside the file is wrong.
    #[error("{}:{line}:{column}: {}{message}", path.display(), key_prefix(key))]
    At {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
        /// The key concerned, when known.
        key: Option<String>,
        /// What is wrong and what to do.
        message: String,
    },
}

fn key_prefix(key: &Option<String>) -> String {
    key.as_ref()
        .map(|k| format!("key `{k}`: "))
        .unwrap_or_default()
}

impl ConfigError {
    /// The key concerned, for errors inside a file.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::At { key, .. } => key.as_deref(),
            _ => None,
        }
    }

    /// `(line, column)` for errors inside a file.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            ConfigError::At { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lines_and_characters_from_one() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        // After the two-byte 'é', the column counts characters, not bytes.
        assert_eq!(line_col(text, 9), (2, 3));
        // Past the end is clamped, and a non-boundary offset is moved back.
        assert_eq!(line_col(text, 100), (3, 1));
        assert_eq!(line_col(text, 8), (2, 2));
    }
}
