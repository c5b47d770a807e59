//! Which commits last changed some lines of a file (blame), bounded.

use std::path::Path;

use git2::{BlameOptions, Oid, Repository};

use crate::limits::MAX_BLAMED_LINES;

/// The commits (full ids) that last changed lines `lines` (or the whole
/// file, up to [`MAX_BLAMED_LINES`] lines) of `rel_path` as of commit
/// `newest`, each with how many of those lines it owns, most lines first.
/// An error (the file is not in that commit, an object is missing) is
/// returned as its message, for a note.
pub fn blame_lines(
    repo: &Repository,
    rel_path: &str,
    lines: Option<(u32, u32)>,
    newest: Oid,
) -> Result<Vec<(String, usize)>, String> {
    let mut opts = BlameOptions::new();
    opts.newest_commit(newest);
    let (start, end) = lines.unwrap_or((1, MAX_BLAMED_LINES));
    let end = end.min(start.saturating_add(MAX_BLAMED_LINES - 1));
    opts.min_line(start as usize).max_line(end as usize);
    let blame = match repo.blame_file(Path::new(rel_path), Some(&mut opts)) {
        Ok(b) => b,
        // Lines past the end of the file: blame the whole (short) file.
        Err(e) if e.code() == git2::ErrorCode::Invalid && lines.is_some() => {
            let mut opts = BlameOptions::new();
            opts.newest_commit(newest);
            repo.blame_file(Path::new(rel_path), Some(&mut opts))
                .map_err(|e| format!("blame of {rel_path}: {}", e.message()))?
        }
        Err(e) => return Err(format!("blame of {rel_path}: {}", e.message())),
    };
    let mut owners: Vec<(String, usize)> = Vec::new();
    for h in blame.iter() {
        let id = h.final_commit_id().to_string();
        match owners.iter_mut().find(|(c, _)| *c == id) {
            Some((_, n)) => *n += h.lines_in_hunk(),
            None => owners.push((id, h.lines_in_hunk())),
        }
    }
    owners.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(owners)
}
