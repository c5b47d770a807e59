//! `cgp cache list|clear`: the workspace index cache, where it lives, what
//! each workspace's index takes on disk, and removing one or all of them.
//!
//! The cache base is the one the workspace provider uses (`--cache-dir`,
//! else `$CONTEXTGRAPH_WORKSPACE_CACHE`, else `$XDG_CACHE_HOME/contextgraph/
//! workspace`, else `~/.cache/contextgraph/workspace`); each index is a
//! directory in it named by 16 hex digits of the workspace path's SHA-256,
//! whose files record the workspace path (see `contextgraph-search`'s
//! `store` module).
//!
//! Deleting is confined to the cache: only direct children of the base
//! whose names have that exact shape are ever removed; such a child that is
//! a symbolic link loses the link, never what it points to, and a directory
//! is removed without following any link inside it. A named workspace is
//! cleared at once (the user said which); `--all` and `--gone` ask on a
//! terminal and need `--yes` anywhere else; `--dry-run` only says what
//! would go. Nothing is ever deleted that the command did not list first.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use contextgraph_provider_workspace::store;
use serde::Serialize;

use super::{CommandError, UsageError};
use crate::output;
use crate::terminal::{for_terminal, path_for_terminal};

/// The `format_version` of `cgp cache list --json`.
pub const FORMAT_VERSION: u32 = 1;

/// Arguments of `cgp cache`.
#[derive(Debug, Args)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub struct CacheArgs {
    /// The cache base directory (default: $CONTEXTGRAPH_WORKSPACE_CACHE, else
    /// $XDG_CACHE_HOME/contextgraph/workspace, else ~/.cache/contextgraph/workspace).
    #[arg(long, value_name = "DIR", global = true)]
    pub cache_dir: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub action: CacheAction,
}

/// `cgp cache` actions.
#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Where the cache is, and each workspace's index with its size on disk.
    #[command(after_help = "\
Examples:
  cgp cache list
  cgp cache list --json | jq '.entries[] | select(.workspace_exists | not)'")]
    List {
        /// Print JSON (`format_version`, `base`, `total_bytes`, `entries`) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Delete the index of one workspace, of workspaces that no longer exist, or all of them.
    #[command(after_help = "\
Examples:
  cgp cache clear .                  # this workspace's index (rebuilt on the next cgp context)
  cgp cache clear --gone             # indexes of workspaces that no longer exist
  cgp cache clear --all --dry-run    # what --all would delete
  cgp cache clear --all --yes        # everything, without asking (scripts, CI)

--all and --gone ask first on a terminal; elsewhere they need --yes. A running `cgp mcp` or
`cgp serve workspace` keeps serving from the files it has open and writes a new index later.

Exit codes:
  0  deleted (or nothing to delete, said on stderr)
  1  a deletion failed (the path and the reason are on stderr)
  2  usage error: no target, or --all/--gone without --yes when not at a terminal")]
    Clear {
        /// The workspace whose index to delete (it need not exist any more).
        #[arg(value_name = "WORKSPACE", conflicts_with_all = ["all", "gone"])]
        workspace: Option<PathBuf>,
        /// Delete every index in the cache.
        #[arg(long, conflicts_with = "gone")]
        all: bool,
        /// Delete the indexes of workspaces that no longer exist.
        #[arg(long)]
        gone: bool,
        /// Do not ask.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Only say what would be deleted.
        #[arg(long)]
        dry_run: bool,
    },
}

/// One index in the cache.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// The entry's directory name (16 hex digits).
    pub id: String,
    /// Its path.
    pub path: PathBuf,
    /// The workspace its files record, if they record one.
    pub workspace: Option<String>,
    /// Whether that workspace directory still exists.
    pub workspace_exists: bool,
    /// The index format it was written in (another format is rebuilt on use).
    pub format: Option<u32>,
    /// Bytes of the regular files in it (links are not followed).
    pub bytes: u64,
}

/// Run `cgp cache`.
pub fn run(args: CacheArgs) -> Result<(), CommandError> {
    let base = match args.cache_dir {
        Some(dir) => dir,
        None => store::default_cache_base().ok_or(
            "no cache directory: set CONTEXTGRAPH_WORKSPACE_CACHE (or HOME, or XDG_CACHE_HOME), \
             or pass --cache-dir",
        )?,
    };
    match args.action {
        CacheAction::List { json } => list(&base, json),
        CacheAction::Clear {
            workspace,
            all,
            gone,
            yes,
            dry_run,
        } => {
            let target = match (workspace, all, gone) {
                (Some(w), _, _) => Target::Workspace(w),
                (None, true, _) => Target::All,
                (None, false, true) => Target::Gone,
                (None, false, false) => {
                    return Err(Box::new(UsageError(
                        "say what to clear: a workspace directory (cgp cache clear .), --gone \
                         (workspaces that no longer exist) or --all"
                            .to_owned(),
                    )))
                }
            };
            clear(&base, &target, yes, dry_run)
        }
    }
}

/// Every index in `base`, largest first (an absent base is an empty cache).
pub fn entries(base: &Path) -> Result<Vec<Entry>, CommandError> {
    let read = match std::fs::read_dir(base) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(format!(
                "cannot read the cache directory {}: {e}",
                path_for_terminal(base)
            )
            .into())
        }
    };
    let mut out = Vec::new();
    for item in read.flatten() {
        let Some(id) = item.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if !is_entry_name(&id) {
            continue;
        }
        let path = item.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let (recorded, bytes) = if meta.is_dir() {
            (store::recorded_workspace(&path), dir_bytes(&path))
        } else {
            (None, 0)
        };
        let workspace_exists = recorded
            .as_ref()
            .is_some_and(|(w, _)| Path::new(w).is_dir());
        out.push(Entry {
            id,
            path,
            workspace_exists,
            format: recorded.as_ref().map(|(_, f)| *f),
            workspace: recorded.map(|(w, _)| w),
            bytes,
        });
    }
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.id.cmp(&b.id)));
    Ok(out)
}

/// An index directory's name: exactly 16 lowercase hex digits (what
/// `store::cache_dir_for` makes). Nothing else in the base is ours to touch.
fn is_entry_name(name: &str) -> bool {
    name.len() == 16 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Bytes of the regular files directly in `dir` and below, never through a link.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(read) = std::fs::read_dir(dir) else {
        return 0;
    };
    read.flatten()
        .filter_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            Some(if meta.is_file() {
                meta.len()
            } else if meta.is_dir() {
                dir_bytes(&e.path())
            } else {
                0
            })
        })
        .sum()
}

/// `bytes` for a person: `0 B`, `812 KB`, `384.1 MB`, `1.20 GB`.
pub fn human_bytes(bytes: u64) -> String {
    const KB: f64 = 1000.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.0} KB", b / KB)
    } else if b < KB * KB * KB {
        format!("{:.1} MB", b / (KB * KB))
    } else {
        format!("{:.2} GB", b / (KB * KB * KB))
    }
}

fn list(base: &Path, json: bool) -> Result<(), CommandError> {
    let entries = entries(base)?;
    let total: u64 = entries.iter().map(|e| e.bytes).sum();
    let mut stdout = std::io::stdout().lock();
    let written = if json {
        let value = serde_json::json!({
            "format_version": FORMAT_VERSION,
            "base": base,
            "total_bytes": total,
            "entries": entries,
        });
        serde_json::to_writer_pretty(&mut stdout, &value)
            .map_err(std::io::Error::from)
            .and_then(|()| stdout.write_all(b"\n"))
    } else {
        let mut text = format!(
            "cache: {} ({} {}, {})\n",
            path_for_terminal(base),
            entries.len(),
            if entries.len() == 1 {
                "index"
            } else {
                "indexes"
            },
            human_bytes(total)
        );
        for e in &entries {
            let what = match &e.workspace {
                Some(w) if e.workspace_exists => for_terminal(w),
                Some(w) => format!("{} (gone)", for_terminal(w)),
                None => format!("(unreadable index {})", e.id),
            };
            text.push_str(&format!("{:>10}  {what}\n", human_bytes(e.bytes)));
        }
        if entries.is_empty() {
            text.push_str(
                "  (empty: an index is written by the first cgp context in a workspace)\n",
            );
        }
        stdout.write_all(text.as_bytes())
    };
    output::finish_stdout(written.and_then(|()| stdout.flush()))
}

/// What `cgp cache clear` deletes.
enum Target {
    Workspace(PathBuf),
    All,
    Gone,
}

fn clear(base: &Path, target: &Target, yes: bool, dry_run: bool) -> Result<(), CommandError> {
    let all = entries(base)?;
    let chosen: Vec<&Entry> = match target {
        Target::All => all.iter().collect(),
        Target::Gone => all
            .iter()
            .filter(|e| e.workspace.is_some() && !e.workspace_exists)
            .collect(),
        Target::Workspace(dir) => {
            let wanted = workspace_ids(base, dir);
            all.iter()
                .filter(|e| {
                    wanted.0.contains(&e.id)
                        || e.workspace.as_ref().is_some_and(|w| wanted.1.contains(w))
                })
                .collect()
        }
    };
    let mut err = std::io::stderr().lock();
    if chosen.is_empty() {
        let _ = writeln!(
            err,
            "cgp: nothing to clear in {}{}",
            path_for_terminal(base),
            match target {
                Target::Workspace(dir) => format!(" (no index of {})", path_for_terminal(dir)),
                Target::Gone => " (every indexed workspace still exists)".to_owned(),
                Target::All => String::new(),
            }
        );
        return Ok(());
    }
    let bytes: u64 = chosen.iter().map(|e| e.bytes).sum();
    for e in &chosen {
        let _ = writeln!(
            err,
            "{} {:>10}  {}",
            if dry_run { "would delete" } else { "deleting" },
            human_bytes(e.bytes),
            e.workspace
                .as_deref()
                .map(for_terminal)
                .unwrap_or_else(|| path_for_terminal(&e.path))
        );
    }
    if dry_run {
        let _ = writeln!(
            err,
            "cgp: --dry-run: nothing deleted ({} {}, {})",
            chosen.len(),
            if chosen.len() == 1 {
                "index"
            } else {
                "indexes"
            },
            human_bytes(bytes)
        );
        return Ok(());
    }
    let many = !matches!(target, Target::Workspace(_));
    if many && !yes {
        let at_terminal = super::consent_prompt::interactive(
            false,
            std::io::stdin().is_terminal(),
            std::io::stderr().is_terminal(),
            std::env::var_os("CI").as_deref(),
        );
        if !at_terminal {
            return Err(Box::new(UsageError(format!(
                "this would delete {} {} ({}): add --yes to confirm (or --dry-run to see them)",
                chosen.len(),
                if chosen.len() == 1 {
                    "index"
                } else {
                    "indexes"
                },
                human_bytes(bytes)
            ))));
        }
        let _ = write!(
            err,
            "Delete {} {} ({}) from {}? [y/N] ",
            chosen.len(),
            if chosen.len() == 1 {
                "index"
            } else {
                "indexes"
            },
            human_bytes(bytes),
            path_for_terminal(base)
        );
        let _ = err.flush();
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        if !matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            let _ = writeln!(err, "cgp: nothing deleted");
            return Ok(());
        }
    }
    let mut failures = Vec::new();
    for e in &chosen {
        if let Err(why) = remove_entry(base, e) {
            failures.push(format!("{}: {why}", path_for_terminal(&e.path)));
        }
    }
    if failures.is_empty() {
        let _ = writeln!(
            err,
            "cgp: deleted {} {} ({})",
            chosen.len(),
            if chosen.len() == 1 {
                "index"
            } else {
                "indexes"
            },
            human_bytes(bytes)
        );
        Ok(())
    } else {
        Err(format!("could not delete:\n  {}", failures.join("\n  ")).into())
    }
}

/// The entry names and recorded paths that mean the workspace `dir`: the
/// entry of its canonical path when it still exists, and any entry whose
/// files record that path or the absolute path as given.
fn workspace_ids(base: &Path, dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut ids = Vec::new();
    let mut paths = Vec::new();
    if let Ok(canonical) = std::fs::canonicalize(dir) {
        if let Some(name) = store::cache_dir_for(base, &canonical)
            .file_name()
            .and_then(|n| n.to_str())
        {
            ids.push(name.to_owned());
        }
        paths.push(canonical.to_string_lossy().into_owned());
    }
    if let Ok(absolute) = std::path::absolute(dir) {
        paths.push(absolute.to_string_lossy().into_owned());
    }
    (ids, paths)
}

/// Remove one listed entry, confined to `base`: the entry must still be a
/// direct child of `base` with an entry's name; a link is unlinked (what it
/// points to is never touched) and a directory is removed without following
/// links inside it (`std::fs::remove_dir_all` does not follow them).
fn remove_entry(base: &Path, entry: &Entry) -> Result<(), String> {
    let parent_ok = entry.path.parent() == Some(base) && is_entry_name(&entry.id);
    if !parent_ok {
        return Err("not an entry of the cache directory; left alone".to_owned());
    }
    let meta = std::fs::symlink_metadata(&entry.path).map_err(|e| e.to_string())?;
    if meta.is_dir() {
        std::fs::remove_dir_all(&entry.path).map_err(|e| e.to_string())
    } else {
        std::fs::remove_file(&entry.path).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_the_store_makes_are_entries() {
        assert!(is_entry_name("0123456789abcdef"));
        for name in [
            "0123456789ABCDEF",
            "0123456789abcde",
            "0123456789abcdef0",
            "..",
            "notes",
        ] {
            assert!(!is_entry_name(name), "{name}");
        }
        let made = store::cache_dir_for(Path::new("/base"), Path::new("/src/x"));
        assert!(is_entry_name(made.file_name().unwrap().to_str().unwrap()));
    }

    #[test]
    fn sizes_read_as_a_person_would_say_them() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(812_000), "812 KB");
        assert_eq!(human_bytes(384_100_000), "384.1 MB");
        assert_eq!(human_bytes(1_200_000_000), "1.20 GB");
    }
}
