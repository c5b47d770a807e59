//! Line windows: the fallback chunking for files without structure, for the
//! top-level code between definitions, and for any file whose grammar failed.

use super::{Chunk, ChunkKind, LineIndex};

/// Most lines in one window.
pub const WINDOW_LINES: u32 = 40;

/// Split lines `from..=to` into windows of at most [`WINDOW_LINES`] lines,
/// preferring to cut at a blank line so a window holds whole paragraphs or
/// statements. Leading and trailing blank lines are trimmed and windows that
/// hold nothing but blank lines are dropped (they would only cost budget).
pub fn windows(text: &str, lines: &LineIndex, from: u32, to: u32, kind: ChunkKind) -> Vec<Chunk> {
    let blank = |n: u32| lines.slice(text, n, n).is_none_or(|l| l.trim().is_empty());
    let mut out = Vec::new();
    let mut start = from.max(1);
    let to = to.min(lines.line_count());
    while start <= to {
        while start <= to && blank(start) {
            start += 1;
        }
        if start > to {
            break;
        }
        let mut end = (start + WINDOW_LINES - 1).min(to);
        if end < to {
            // Cut at the last blank line in the window's final quarter, if any.
            let floor = end.saturating_sub(WINDOW_LINES / 4).max(start);
            if let Some(cut) = (floor..end).rev().find(|&n| blank(n)) {
                end = cut;
            }
        }
        let mut last = end;
        while last > start && blank(last) {
            last -= 1;
        }
        let method = "line-window";
        out.push(Chunk::plain(
            kind,
            format!("L{start}-{last}"),
            format!("lines {start}-{last}"),
            start,
            last,
            method,
        ));
        start = end + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_non_blank_lines_and_skip_blank_runs() {
        let text: String = (1..=100)
            .map(|i| {
                if i % 30 == 0 {
                    "\n".to_owned()
                } else {
                    format!("line {i}\n")
                }
            })
            .collect();
        let li = LineIndex::new(&text);
        let w = windows(&text, &li, 1, li.line_count(), ChunkKind::Snippet);
        assert!(w.iter().all(|c| c.end_line - c.start_line < WINDOW_LINES));
        for n in 1..=100u32 {
            if n % 30 != 0 {
                assert!(
                    w.iter().any(|c| c.start_line <= n && n <= c.end_line),
                    "line {n}"
                );
            }
        }
        let only_blank = "\n\n\n";
        let li = LineIndex::new(only_blank);
        assert!(windows(only_blank, &li, 1, 3, ChunkKind::Snippet).is_empty());
    }
}
