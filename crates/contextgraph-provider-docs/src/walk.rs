//! Finding the documents under the root, within bounds, without leaving it.
//!
//! Rules (the same for indexing and for `verify`, which re-resolves a path
//! taken from a frame id and must not be talked into reading anything the
//! index would not have served):
//! - only `.md`, `.markdown`, `.txt` and `.rst` files (case-insensitive);
//! - hidden names (leading `.`) are skipped, and so are directories named
//!   `target` or `node_modules` (build output and vendored packages);
//! - directory symlinks are never followed (no loops, no escapes); a file
//!   symlink is served only when its target resolves inside the root *and*
//!   the target's own path passes every rule here (a link named
//!   `notes.md` to `.env`, `.ssh/id_ed25519` or a gitignored file is what
//!   it points to, and is not served);
//! - non-UTF-8 names are skipped: a frame id and a `file://` URI must be text;
//! - paths on the shared secrets deny-list (`contextgraph_types::secrets`)
//!   and paths `.gitignore` or `.cgpignore` exclude (the workspace walk's
//!   rules, `contextgraph_search::walk::is_ignored`) are never served.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::DocsConfig;

/// File extensions served.
pub const DOC_EXTENSIONS: [&str; 4] = ["md", "markdown", "txt", "rst"];

/// Whether a file name has a served extension.
pub fn is_doc_file_name(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && DOC_EXTENSIONS.iter().any(|d| ext.eq_ignore_ascii_case(d))
    })
}

/// Whether a directory of this name is never entered.
pub fn is_skipped_dir_name(name: &str) -> bool {
    name.starts_with('.') || name == "target" || name == "node_modules"
}

/// What identifies a version of a file cheaply: its length and mtime. A
/// query re-indexes a file only when one of them moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    pub len: u64,
    pub modified: Option<SystemTime>,
}

impl FileStamp {
    pub(crate) fn of(meta: &fs::Metadata) -> Self {
        FileStamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// A document found by the walk.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// `/`-separated path relative to the root.
    pub rel: String,
    pub abs: PathBuf,
    pub stamp: FileStamp,
}

/// What the last scan of the folder saw, for operators ("why is my file not
/// served?").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanReport {
    /// Documents indexed.
    pub files: usize,
    /// Sections indexed across them.
    pub sections: usize,
    /// Documents over the per-file size cap.
    pub skipped_too_large: usize,
    /// Documents that could not be read, or are not UTF-8.
    pub skipped_unreadable: usize,
    /// Entries whose name is not UTF-8.
    pub skipped_non_utf8_names: usize,
    /// Symlinks not followed (directory links, or links leaving the root).
    pub skipped_symlinks: usize,
    /// Directories deeper than the depth cap.
    pub skipped_too_deep: usize,
    /// Whether the file-count or total-size cap stopped the scan early.
    pub hit_limit: bool,
}

/// Walk `root` (canonical) under `config`'s bounds.
pub(crate) fn walk(root: &Path, config: &DocsConfig, report: &mut ScanReport) -> Vec<Found> {
    let mut found = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            report.skipped_unreadable += 1;
            continue;
        };
        let mut entries: Vec<fs::DirEntry> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(fs::DirEntry::file_name);
        let mut subdirs = Vec::new();
        for entry in entries {
            let Ok(name) = entry.file_name().into_string() else {
                report.skipped_non_utf8_names += 1;
                continue;
            };
            let Ok(kind) = entry.file_type() else {
                report.skipped_unreadable += 1;
                continue;
            };
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            if kind.is_dir() {
                if is_skipped_dir_name(&name) {
                    continue;
                }
                if depth + 1 > config.max_depth {
                    report.skipped_too_deep += 1;
                } else {
                    subdirs.push((entry.path(), rel, depth + 1));
                }
                continue;
            }
            if name.starts_with('.') || !is_doc_file_name(&name) {
                continue;
            }
            // The deny-list every file-reading provider shares
            // (`secrets/notes.md`, `.kube/README.md`…).
            if contextgraph_types::secrets::is_secret_path(&rel) {
                continue;
            }
            // `.gitignore` and `.cgpignore`, as the workspace walk honours them.
            if contextgraph_search::walk::is_ignored(root, &rel) {
                continue;
            }
            let path = entry.path();
            let meta = if kind.is_symlink() {
                match symlink_target_inside(root, &path) {
                    Some(meta) => meta,
                    None => {
                        report.skipped_symlinks += 1;
                        continue;
                    }
                }
            } else {
                match entry.metadata() {
                    Ok(meta) if meta.is_file() => meta,
                    _ => continue,
                }
            };
            if meta.len() > config.max_file_bytes {
                report.skipped_too_large += 1;
                continue;
            }
            if found.len() >= config.max_files {
                report.hit_limit = true;
                return found;
            }
            found.push(Found {
                rel,
                abs: path,
                stamp: FileStamp::of(&meta),
            });
        }
        stack.extend(subdirs.into_iter().rev());
    }
    found
}

/// The metadata of a file symlink's target when it resolves to a regular file
/// inside `root` that the walk would serve under its own name; `None`
/// otherwise. Never followed out of the root, and the secrets and ignore
/// rules apply to what the file *is*, not the name it is reached by (N3):
/// `env-notes.md -> .env`, `key.md -> .ssh/id_ed25519` and a link to a
/// gitignored file are not served.
fn symlink_target_inside(root: &Path, link: &Path) -> Option<fs::Metadata> {
    let target = fs::canonicalize(link).ok()?;
    let rel = target.strip_prefix(root).ok()?.to_str()?.replace('\\', "/");
    if !servable_by_name(root, &rel, usize::MAX) {
        return None;
    }
    fs::metadata(&target).ok().filter(fs::Metadata::is_file)
}

/// Whether the relative path `rel` passes the rules a served document's
/// name must: plain components, not a dot-file, a document extension, no
/// skipped or too-deep directory, not on the secrets deny-list, not
/// ignored by `.gitignore` / `.cgpignore`.
fn servable_by_name(root: &Path, rel: &str, max_depth: usize) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((file, dirs)) = parts.split_last() else {
        return false;
    };
    let bad_part = |p: &&str| p.is_empty() || *p == "." || *p == "..";
    !(parts.iter().any(bad_part)
        || file.starts_with('.')
        || !is_doc_file_name(file)
        || dirs.iter().any(|d| is_skipped_dir_name(d))
        || dirs.len() > max_depth
        || contextgraph_types::secrets::is_secret_path(rel)
        || contextgraph_search::walk::is_ignored(root, rel))
}

/// Re-resolve a served document from its relative path under the same rules
/// as the walk. `Ok(None)`: the path is not (or no longer) a served document.
/// `Err`: the file system would not say (e.g. permission denied).
pub(crate) fn served_path(
    root: &Path,
    rel: &str,
    config: &DocsConfig,
) -> io::Result<Option<PathBuf>> {
    if !servable_by_name(root, rel, config.max_depth) {
        return Ok(None);
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((file, dirs)) = parts.split_last() else {
        return Ok(None);
    };
    let mut path = root.to_path_buf();
    for dir in dirs {
        path.push(dir);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    path.push(file);
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(Some(path)),
        Ok(meta) if meta.file_type().is_symlink() => {
            Ok(symlink_target_inside(root, &path).map(|_| path))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A regular file at `rel` (relative, `/`-separated, already normalised)
/// that resolves inside `root`, of any type: the target of a
/// `doc.documents` relation need not be a document itself.
pub(crate) fn existing_file_inside(root: &Path, rel: &str) -> Option<PathBuf> {
    let path = root.join(rel);
    let real = fs::canonicalize(&path).ok()?;
    (real.starts_with(root) && real.is_file()).then_some(path)
}
