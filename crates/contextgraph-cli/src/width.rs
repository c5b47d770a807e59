//! How wide what `cgp` writes on stderr may be: tables and status lines
//! fit the terminal, so nothing wraps onto a second line (a wrapped
//! progress line scrolls garbage on every redraw).
//!
//! The width is `$COLUMNS` when set to a sensible number (a user's choice,
//! and what tests set), else the terminal's own size when stderr is one,
//! else unlimited: a log file or a pipe keeps whole lines.

use std::io::IsTerminal;

/// Narrowest width honoured: below this, lines are cut at this width.
const MIN_COLUMNS: usize = 20;

/// The width stderr output must fit (see the module docs).
pub fn stderr_columns() -> usize {
    columns(std::io::stderr().is_terminal(), libc::STDERR_FILENO)
}

/// The width a table on stdout must fit (the same rules, for stdout).
pub fn stdout_columns() -> usize {
    columns(std::io::stdout().is_terminal(), libc::STDOUT_FILENO)
}

fn columns(is_terminal: bool, fd: libc::c_int) -> usize {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| (MIN_COLUMNS..=10_000).contains(c))
    {
        return n;
    }
    if is_terminal {
        if let Some(n) = terminal_columns(fd) {
            return n.max(MIN_COLUMNS);
        }
        return 80;
    }
    usize::MAX
}

/// `line` cut to fit `columns` (one column is left free: some terminals
/// wrap when the last one is written), a `…` marking the cut. `line` has
/// been through the display-text policy, so it holds no control character.
pub fn fit(line: &str, columns: usize) -> String {
    let room = columns.saturating_sub(1).max(1);
    if line.chars().count() <= room {
        return line.to_owned();
    }
    let mut out: String = line.chars().take(room - 1).collect();
    out.push('…');
    out
}

/// Write `text` (already fit for a terminal) on stderr, each of its lines
/// wrapped to the width (continuation lines indented by two spaces).
pub fn say(text: &str) {
    use std::io::Write;
    let columns = stderr_columns();
    let mut err = std::io::stderr().lock();
    for paragraph in text.lines() {
        for (i, line) in wrap(paragraph, columns.saturating_sub(3))
            .iter()
            .enumerate()
        {
            let indent = if i == 0 { "" } else { "  " };
            let _ = writeln!(err, "{indent}{line}");
        }
    }
}

/// `text` cut from the left to at most `width` characters, a `…` marking
/// the cut: for paths and ids, whose end (file, symbol, lines) says most.
pub fn keep_end(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_owned();
    }
    let keep = width.saturating_sub(1);
    let mut out = String::from("…");
    out.extend(text.chars().skip(n - keep));
    out
}

/// `text` broken at spaces into lines of at most `width` characters (a
/// word longer than that is cut into pieces), for values that must be
/// shown whole.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let sep = usize::from(used > 0);
            if used + sep + word.len() <= width {
                if sep == 1 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            // A word wider than a whole line: cut it.
            let rest = word.split_off(width);
            lines.push(word.iter().collect());
            word = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The terminal's width in columns, from the kernel (`TIOCGWINSZ` on `fd`).
fn terminal_columns(fd: libc::c_int) -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which
    // points at a live, properly aligned local; `fd` is only queried (an
    // fd that is not a terminal makes it fail with ENOTTY, nothing else).
    #[allow(unsafe_code)]
    let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) };
    (rc == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_to_leave_the_last_column_free() {
        assert_eq!(fit("short", 80), "short");
        let long = "x".repeat(200);
        let cut = fit(&long, 80);
        assert_eq!(cut.chars().count(), 79);
        assert!(cut.ends_with('…'));
        assert_eq!(fit(&long, usize::MAX), long);
        assert_eq!(fit("abcdef", 1).chars().count(), 1);
    }

    #[test]
    fn ids_keep_their_end() {
        assert_eq!(keep_end("crates/a/src/audit.rs#fn:q", 12), "…dit.rs#fn:q");
        assert_eq!(keep_end("short", 12), "short");
        assert_eq!(keep_end("abcdef", 4).chars().count(), 4);
    }

    #[test]
    fn wrapped_values_keep_every_character_within_the_width() {
        let text = "REQUIRED: run cgp consent grant remote --scope third-party-model --dir /a/very/long/path/without/any/spaces/at/all/in/it";
        for width in [10, 30, 60] {
            let lines = wrap(text, width);
            assert!(
                lines.iter().all(|l| l.chars().count() <= width),
                "{lines:?}"
            );
            let joined: String = lines.concat().chars().filter(|c| *c != ' ').collect();
            let original: String = text.chars().filter(|c| *c != ' ').collect();
            assert_eq!(joined, original, "nothing lost at {width}");
        }
        assert_eq!(wrap("", 10), vec![String::new()]);
    }
}
