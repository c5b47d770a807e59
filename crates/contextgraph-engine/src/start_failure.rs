//! Why a stdio provider did not start, in plain words, with its stderr as
//! lines.
//!
//! The host's errors are precise and protocol-shaped ("H1: it closed the
//! connection before the handshake_ack; its stderr ended with: …"), with the
//! stderr escaped onto one line. A person starting `cgp` wants to read what
//! the program said, as it said it: which program, in which directory, and
//! the last lines of its stderr, each one made safe to show.

use std::path::Path;

use contextgraph_host::{HandshakeError, RequestError};
use contextgraph_types::display_text::bounded;

/// Most stderr lines shown (the last ones: a traceback ends with its cause).
pub(crate) const MAX_STDERR_LINES: usize = 12;
/// Longest stderr line shown, in characters.
const MAX_LINE_CHARS: usize = 300;

/// The message for `error`, raised starting `program args…` in `cwd`: one
/// sentence, then the stderr's last lines, each indented by four spaces.
pub(crate) fn describe(
    error: &RequestError,
    program: &Path,
    args: &[String],
    cwd: Option<&Path>,
) -> String {
    let mut line = vec![program.display().to_string()];
    line.extend(args.iter().cloned());
    let command = bounded(&line.join(" "), 200);
    let place = cwd
        .map(|d| format!(" (in {})", bounded(&d.display().to_string(), 200)))
        .unwrap_or_default();
    let (sentence, stderr) = match error {
        RequestError::Handshake(HandshakeError::Closed { stderr_tail, .. }) => (
            format!("`{command}`{place} exited before it answered the CGP handshake; check that it is a CGP provider and starts from there"),
            stderr_tail.as_str(),
        ),
        RequestError::Handshake(HandshakeError::Timeout {
            timeout_ms,
            stderr_tail,
            ..
        }) => (
            format!("`{command}`{place} did not answer the CGP handshake within {timeout_ms} ms (H3); it is hung or not a CGP provider, or raise its timeout_ms"),
            stderr_tail.as_str(),
        ),
        // It never ran: there is no stderr to show.
        RequestError::Spawn { detail, .. } => {
            return format!(
                "cannot run `{command}`{place}: {}; check that the program exists (a bare name is looked up on PATH) and is executable",
                bounded(detail, 200)
            )
        }
        other => return other.to_string(),
    };
    // The host keeps the tail already made safe, its line breaks escaped
    // (`\u{a}`): they become lines again, everything else stays escaped.
    let stderr = stderr.replace("\\u{d}\\u{a}", "\n").replace("\\u{a}", "\n");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return format!("{sentence}; it wrote nothing on stderr");
    }
    let shown = &lines[lines.len().saturating_sub(MAX_STDERR_LINES)..];
    let mut out = format!("{sentence}. Its stderr ended with:");
    for l in shown {
        out.push_str("\n    ");
        out.push_str(&bounded(l, MAX_LINE_CHARS));
    }
    out
}

/// `message` on one line (a table cell): its lines joined by ` | `.
pub(crate) fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_that_exits_is_named_with_its_directory_and_its_stderr_as_lines() {
        let error = RequestError::Handshake(HandshakeError::Closed {
            provider: "python3".into(),
            // As the host keeps it: escaped, line breaks included.
            stderr_tail: "Traceback (most recent call last):\\u{a}  File \"provider.py\"\\u{a}ImportError: no foo\\u{1b}[2J\\u{a}".into(),
        });
        let text = describe(
            &error,
            Path::new("python3"),
            &["provider.py".into()],
            Some(Path::new("/repo")),
        );
        assert!(
            text.starts_with(
                "`python3 provider.py` (in /repo) exited before it answered the CGP handshake"
            ),
            "{text}"
        );
        assert!(!text.contains("\\u{a}"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(
            lines[3], "    ImportError: no foo\\u{1b}[2J",
            "escapes stay escaped"
        );
        assert_eq!(
            one_line(&text).matches(" | ").count(),
            3,
            "{}",
            one_line(&text)
        );
    }

    #[test]
    fn only_the_last_lines_of_a_long_stderr_are_kept() {
        let tail: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let error = RequestError::Handshake(HandshakeError::Closed {
            provider: "p".into(),
            stderr_tail: tail,
        });
        let text = describe(&error, Path::new("p"), &[], None);
        assert_eq!(text.lines().count(), 1 + MAX_STDERR_LINES);
        assert!(text.ends_with("    line 39"), "{text}");
        let silent = RequestError::Handshake(HandshakeError::Closed {
            provider: "p".into(),
            stderr_tail: String::new(),
        });
        assert!(
            describe(&silent, Path::new("p"), &[], None).ends_with("it wrote nothing on stderr")
        );
    }
}
