//! A frame's content from its id alone, so that `verify` can recompute it:
//! `<commit id>` is the commit (header, message, changed paths);
//! `<commit id>:<path>` adds that path's diff, whole hunks in order up to
//! [`MAX_HUNK_BYTES_PER_FRAME`]. Commits are immutable, so the same id
//! always renders the same bytes while the rules of what may be served
//! stay the same.

use std::fmt::Write as _;

use contextgraph_types::sha256::sha256_digest;
use contextgraph_types::{Provenance, Timestamp};
use git2::{DiffOptions, Oid, Patch, Repository};

use crate::gate::{diffable_path, text_is_refused, PathGate};
use crate::limits::{MAX_HUNK_BYTES_PER_FRAME, MAX_LISTED_PATHS};
use crate::record::CommitRecord;
use crate::{PROVIDER_NAME, PROVIDER_VERSION};

/// A frame's identity split: the commit, and the path whose diff it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameKey<'a> {
    /// The full commit id.
    pub commit: &'a str,
    /// The path whose hunks are shown, if any.
    pub path: Option<&'a str>,
}

impl<'a> FrameKey<'a> {
    /// Parse a frame id of this provider (`None`: not one).
    pub fn parse(frame_id: &'a str) -> Option<FrameKey<'a>> {
        let (commit, path) = match frame_id.split_once(':') {
            Some((c, p)) if !p.is_empty() => (c, Some(p)),
            Some(_) => return None,
            None => (frame_id, None),
        };
        let hex = commit.len() >= 40
            && commit
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        hex.then_some(FrameKey { commit, path })
    }

    /// The frame id.
    pub fn id(&self) -> String {
        match self.path {
            Some(p) => format!("{}:{p}", self.commit),
            None => self.commit.to_owned(),
        }
    }
}

/// A rendered frame body with what cites it.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The frame's content.
    pub content: String,
    /// The title.
    pub title: String,
    /// The citation label.
    pub label: String,
    /// The commit, then one entry per hunk shown.
    pub provenance: Vec<Provenance>,
    /// The listed paths that exist in the working tree now (relations).
    pub paths: Vec<String>,
    /// Diff bytes read.
    pub diff_bytes: usize,
}

/// Why an id cannot be rendered now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotServed {
    /// The path is not one the commit changed, or its history may not be
    /// served (a secret, an ignored file, a binary or generated one), or
    /// its diff holds a secret.
    Refused,
    /// The repository could not give the objects (missing, corrupt).
    Unreadable(String),
}

fn by() -> String {
    format!("{PROVIDER_NAME}/{PROVIDER_VERSION}")
}

/// Render commit `rec`, with `path`'s hunks when given.
pub fn render(
    repo: &Repository,
    rec: &CommitRecord,
    path: Option<&str>,
    gate: &mut PathGate,
    workdir: &std::path::Path,
) -> Result<Rendered, NotServed> {
    if rec.refused {
        return Err(NotServed::Refused);
    }
    let admitted: Vec<&crate::record::ChangedPath> = rec
        .paths
        .iter()
        .filter(|p| gate.admits(&p.path) && p.from.as_deref().is_none_or(|f| gate.admits(f)))
        .collect();
    let hidden = rec.withheld as usize + (rec.paths.len() - admitted.len());
    let mut content = String::new();
    let when = Timestamp::from_unix(rec.author_time, 0);
    let _ = writeln!(content, "commit {}", rec.id);
    let _ = writeln!(content, "Author: {}", rec.author);
    let _ = writeln!(content, "Date: {when}");
    let _ = writeln!(content);
    let _ = writeln!(content, "{}", rec.subject);
    if !rec.body.is_empty() {
        let _ = writeln!(content);
        let _ = writeln!(content, "{}", rec.body);
    }
    let _ = writeln!(content);
    if rec.boundary {
        let _ = writeln!(
            content,
            "Changed files: unknown (the parents of this commit are not in this shallow clone)"
        );
    } else if rec.parents > 1 {
        let _ = writeln!(content, "Merge of {} parents", rec.parents);
    } else {
        let _ = writeln!(content, "Changed files ({}):", admitted.len());
        for p in admitted.iter().take(MAX_LISTED_PATHS) {
            match &p.from {
                Some(from) => {
                    let _ = writeln!(content, "  {} {from} -> {}", p.change.letter(), p.path);
                }
                None => {
                    let _ = writeln!(content, "  {} {}", p.change.letter(), p.path);
                }
            }
        }
        if admitted.len() > MAX_LISTED_PATHS {
            let _ = writeln!(
                content,
                "  … and {} more",
                admitted.len() - MAX_LISTED_PATHS
            );
        }
        if hidden > 0 {
            let _ = writeln!(content, "  ({hidden} path(s) not shown: secret or ignored)");
        }
    }
    let short = rec.short_id();
    let mut provenance = vec![Provenance {
        kind: "git".into(),
        uri: Some(format!("git:{}", rec.id)),
        range: None,
        digest: None,
        method: Some(format!("git show --name-status {}", rec.id)),
        by: Some(by()),
    }];
    let mut title = format!("commit {short}: {}", rec.subject);
    let mut label = format!("{short} {}", rec.subject);
    let mut diff_bytes = 0;
    if let Some(path) = path {
        let changed = admitted
            .iter()
            .find(|p| p.path == path)
            .copied()
            .ok_or(NotServed::Refused)?;
        if !diffable_path(path) {
            return Err(NotServed::Refused);
        }
        let hunks = hunks_of(repo, rec, changed.path.as_str(), changed.from.as_deref())?;
        diff_bytes = hunks.iter().map(|h| h.text.len()).sum();
        let all: String = hunks.iter().map(|h| h.text.as_str()).collect();
        if text_is_refused(path, &all) {
            return Err(NotServed::Refused);
        }
        let _ = writeln!(content);
        let _ = writeln!(content, "Diff of {path}:");
        let mut used = 0usize;
        let mut shown = 0usize;
        let mut first_range = None;
        for h in &hunks {
            if used + h.text.len() > MAX_HUNK_BYTES_PER_FRAME && shown > 0 {
                break;
            }
            let text = if h.text.len() > MAX_HUNK_BYTES_PER_FRAME {
                // One hunk larger than the cap: its head, cut on a line.
                let cut = h.text[..MAX_HUNK_BYTES_PER_FRAME]
                    .rfind('\n')
                    .map_or(0, |i| i + 1);
                &h.text[..cut]
            } else {
                h.text.as_str()
            };
            content.push_str(text);
            used += text.len();
            shown += 1;
            if let Some(p) = &h.provenance {
                first_range.get_or_insert_with(|| p.range.clone());
                provenance.push(p.clone());
            }
        }
        if shown < hunks.len() {
            let _ = writeln!(content, "… {} more hunk(s) not shown", hunks.len() - shown);
        }
        title = format!("commit {short}: {} ({path})", rec.subject);
        label = match first_range.flatten() {
            Some(r) => format!("{short} {path}:{r}"),
            None => format!("{short} {path}"),
        };
    }
    let paths = admitted
        .iter()
        .filter(|p| p.change != crate::record::Change::Deleted && workdir.join(&p.path).is_file())
        .take(MAX_LISTED_PATHS)
        .map(|p| p.path.clone())
        .collect();
    Ok(Rendered {
        content,
        title,
        label,
        provenance,
        paths,
        diff_bytes,
    })
}

/// One hunk as `git show` prints it, with the provenance of its lines.
struct Hunk {
    text: String,
    provenance: Option<Provenance>,
}

/// The hunks commit `rec` made to `path` (and its old name `from`).
fn hunks_of(
    repo: &Repository,
    rec: &CommitRecord,
    path: &str,
    from: Option<&str>,
) -> Result<Vec<Hunk>, NotServed> {
    let unreadable = |what: &str, e: git2::Error| {
        NotServed::Unreadable(format!("commit {}: {what}: {}", rec.id, e.message()))
    };
    let oid = Oid::from_str(&rec.id).map_err(|e| unreadable("bad id", e))?;
    let commit = repo
        .find_commit(oid)
        .map_err(|e| unreadable("reading the commit", e))?;
    let tree = commit
        .tree()
        .map_err(|e| unreadable("reading its tree", e))?;
    let parent = if commit.parent_count() > 0 {
        Some(
            commit
                .parent(0)
                .map_err(|e| unreadable("reading its parent", e))?,
        )
    } else {
        None
    };
    let parent_tree = match &parent {
        Some(p) => Some(
            p.tree()
                .map_err(|e| unreadable("reading its parent's tree", e))?,
        ),
        None => None,
    };
    let mut opts = DiffOptions::new();
    opts.pathspec(path)
        .disable_pathspec_match(true)
        .context_lines(3);
    if let Some(f) = from {
        opts.pathspec(f);
    }
    let mut diff = repo
        .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))
        .map_err(|e| unreadable("diffing", e))?;
    if from.is_some() {
        let mut find = git2::DiffFindOptions::new();
        find.renames(true);
        diff.find_similar(Some(&mut find))
            .map_err(|e| unreadable("finding the rename", e))?;
    }
    let new_blob = tree
        .get_path(std::path::Path::new(path))
        .ok()
        .and_then(|e| repo.find_blob(e.id()).ok());
    let old_path = from.unwrap_or(path);
    let old_blob = parent_tree
        .as_ref()
        .and_then(|t| t.get_path(std::path::Path::new(old_path)).ok())
        .and_then(|e| repo.find_blob(e.id()).ok());
    let mut out = Vec::new();
    for idx in 0..diff.deltas().len() {
        let Some(patch) =
            Patch::from_diff(&diff, idx).map_err(|e| unreadable("reading the patch", e))?
        else {
            continue;
        };
        for h in 0..patch.num_hunks() {
            let (hunk, lines) = patch.hunk(h).map_err(|e| unreadable("reading a hunk", e))?;
            let mut text = String::from_utf8_lossy(hunk.header()).into_owned();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            for l in 0..lines {
                let line = patch
                    .line_in_hunk(h, l)
                    .map_err(|e| unreadable("reading a hunk line", e))?;
                let origin = line.origin();
                if matches!(origin, '+' | '-' | ' ') {
                    text.push(origin);
                }
                text.push_str(&String::from_utf8_lossy(line.content()));
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
            let provenance = if hunk.new_lines() > 0 {
                new_blob.as_ref().and_then(|b| {
                    line_provenance(
                        &rec.id,
                        path,
                        b.content(),
                        hunk.new_start(),
                        hunk.new_start() + hunk.new_lines() - 1,
                    )
                })
            } else {
                match (&parent, &old_blob) {
                    (Some(p), Some(b)) => line_provenance(
                        &p.id().to_string(),
                        old_path,
                        b.content(),
                        hunk.old_start(),
                        hunk.old_start() + hunk.old_lines().max(1) - 1,
                    ),
                    _ => None,
                }
            };
            out.push(Hunk { text, provenance });
        }
    }
    Ok(out)
}

/// Provenance of lines `start..=end` of `path` at commit `commit`: the
/// digest covers exactly those lines' bytes, line terminators included, as
/// `git show <commit>:<path> | sed -n '<start>,<end>p'` prints them.
fn line_provenance(
    commit: &str,
    path: &str,
    blob: &[u8],
    start: u32,
    end: u32,
) -> Option<Provenance> {
    let bytes = lines_bytes(blob, start, end)?;
    Some(Provenance {
        kind: "git".into(),
        uri: Some(format!("git:{commit}:{path}")),
        range: Some(format!("L{start}-{end}")),
        digest: Some(sha256_digest(bytes)),
        method: Some(format!("git show {commit}:{path}")),
        by: Some(by()),
    })
}

/// Lines `start..=end` (1-based) of `text`, terminators included.
pub fn lines_bytes(text: &[u8], start: u32, end: u32) -> Option<&[u8]> {
    if start == 0 || end < start {
        return None;
    }
    let mut line = 1u32;
    let mut begin = if start == 1 { Some(0) } else { None };
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' {
            if line == end {
                return begin.map(|s| &text[s..=i]);
            }
            line += 1;
            if line == start {
                begin = Some(i + 1);
            }
        }
    }
    // The last line has no terminator.
    match begin {
        Some(s) if line == end && s < text.len() => Some(&text[s..]),
        _ => None,
    }
}
