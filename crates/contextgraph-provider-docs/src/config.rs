//! What the docs provider serves and the bounds it keeps.
//!
//! Every bound exists because the folder is not the provider's to control:
//! a stray 300 MB log file, a `node_modules` with a million files or a
//! symlink loop must cost a bounded amount of memory and time, not take the
//! provider down.

use std::path::PathBuf;

/// Files larger than this are skipped (2 MiB): documentation sections are
/// meant to be quoted into a prompt, and a file this large is data, not docs.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// At most this many files are indexed; the rest are counted and skipped.
pub const DEFAULT_MAX_FILES: usize = 10_000;

/// At most this many bytes of documents are held in memory.
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

/// Directories deeper than this below the root are not entered.
pub const DEFAULT_MAX_DEPTH: usize = 32;

/// A `verify` request answers at most this many identities by re-reading
/// files; the rest get `unknown`, which is always honest (V2/V3: the host
/// evicts them and re-queries).
pub const DEFAULT_MAX_VERIFY_IDENTITIES: usize = 4_096;

/// Configuration of a [`DocsProvider`](crate::DocsProvider).
///
/// Built with [`DocsConfig::new`] and adjusted with the `with_*` methods, so
/// adding a bound later is not a breaking change.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DocsConfig {
    /// The folder whose documents are served (recursively).
    pub root: PathBuf,
    /// Files over this size are skipped.
    pub max_file_bytes: u64,
    /// Most files indexed.
    pub max_files: usize,
    /// Most document bytes held.
    pub max_total_bytes: u64,
    /// Deepest directory level entered (the root is level 0).
    pub max_depth: usize,
    /// Most identities one `verify` answers by re-reading.
    pub max_verify_identities: usize,
}

impl DocsConfig {
    /// Serve `root` with the default bounds.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DocsConfig {
            root: root.into(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_files: DEFAULT_MAX_FILES,
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
            max_verify_identities: DEFAULT_MAX_VERIFY_IDENTITIES,
        }
    }

    /// Skip files larger than `bytes`.
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// Index at most `files` files.
    pub fn with_max_files(mut self, files: usize) -> Self {
        self.max_files = files;
        self
    }

    /// Hold at most `bytes` bytes of documents.
    pub fn with_max_total_bytes(mut self, bytes: u64) -> Self {
        self.max_total_bytes = bytes;
        self
    }

    /// Enter directories at most `depth` levels below the root.
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Re-read files for at most `identities` identities per `verify`.
    pub fn with_max_verify_identities(mut self, identities: usize) -> Self {
        self.max_verify_identities = identities;
        self
    }
}
