//! Asking on a terminal for the consent an egress provider lacks, before
//! `cgp context` queries anything (C1, C2, C6).
//!
//! Only when a person can answer: stdin and stderr are terminals, `--no-input`
//! was not given and `CI` is not set. Otherwise nothing is asked and the
//! provider is refused exactly as before, with the `cgp consent grant …`
//! command on stderr. The default — an empty answer, end of input, an
//! unreadable terminal, three answers that are neither — is to skip: consent
//! is never inferred from silence (C2). A grant is recorded through the same
//! engine call as `cgp consent grant` (pinned to the name and version the
//! provider handshook with, one receipt per scope), so `cgp consent list`
//! shows it and `cgp consent revoke` withdraws it.
//!
//! Everything the provider declared is peer-controlled, so it is escaped
//! before it reaches the terminal: a provider cannot forge lines of the
//! question or send escape sequences.

use std::ffi::OsStr;
use std::io::{BufRead, Write};

use contextgraph_engine::{ConsentNeeded, Engine, GrantRequest};
use contextgraph_host::{ConsentRecord, TransportKind};
use contextgraph_types::{Grantor, GrantorKind};

/// How many unrecognised answers are tolerated before the provider is skipped.
const ATTEMPTS: usize = 3;

/// The most characters of one peer-controlled value shown.
const SHOWN_CHARS: usize = 120;

/// Whether to ask: `--no-input` not given, stdin and stderr terminals, and
/// no `CI` variable (any non-empty value counts, as most CI systems set it).
pub fn interactive(no_input: bool, stdin_tty: bool, stderr_tty: bool, ci: Option<&OsStr>) -> bool {
    !no_input && stdin_tty && stderr_tty && ci.is_none_or(OsStr::is_empty)
}

/// The person answering: `$USER`, else `$LOGNAME`, else `unknown` — the
/// same default as `cgp consent grant`.
pub fn interactive_user() -> Grantor {
    let id = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| std::env::var("LOGNAME").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    Grantor {
        kind: GrantorKind::Human,
        id,
    }
}

/// An answer to the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Grant,
    Skip,
}

/// `g`/`grant`/`y`/`yes` grants; `s`/`skip`/`n`/`no` and an empty line skip;
/// anything else is asked again.
fn parse_choice(line: &str) -> Option<Choice> {
    match line.trim().to_ascii_lowercase().as_str() {
        "g" | "grant" | "y" | "yes" => Some(Choice::Grant),
        "" | "s" | "skip" | "n" | "no" => Some(Choice::Skip),
        _ => None,
    }
}

/// `text` fit for one line of a terminal: escaped and bounded by the one
/// display-text policy (`contextgraph_types::display_text`), at most
/// [`SHOWN_CHARS`] characters.
fn shown(text: &str) -> String {
    contextgraph_types::display_text::bounded(text, SHOWN_CHARS)
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The question for one provider, every line ending in a newline except the last.
fn question(need: &ConsentNeeded, store: Option<&std::path::Path>) -> String {
    let d = &need.descriptor;
    let flow = &d.info.data_flow;
    let reached = match &d.transport {
        TransportKind::InProcess => "in-process".to_owned(),
        TransportKind::Stdio { program } => format!("over stdio ({})", shown(program)),
        TransportKind::Http { url, .. } => format!("over HTTP ({})", shown(url)),
        // A transport added later (the enum is non-exhaustive): say so rather than guess.
        _ => "by an unknown transport".to_owned(),
    };
    let remote = matches!(
        d.transport,
        TransportKind::Http {
            loopback: false,
            ..
        }
    );
    let mut q = format!(
        "cgp: provider `{name}` may send data off this machine and has no consent for it (C1, C2, C6); nothing has been sent to it.\n\
         \x20 it is:       {pname} {version}, reached {reached}\n\
         \x20 data flow:   reads the query and workspace content: {reads}; keeps what it receives: {writes}; sends it off this machine: {egress}\n",
        name = shown(&need.name),
        pname = shown(&d.info.name),
        version = shown(&d.info.version),
        reads = yes_no(flow.reads),
        writes = yes_no(flow.writes),
        egress = yes_no(flow.egress),
    );
    if remote && !flow.egress {
        q.push_str("               (it is reached at a non-loopback address, so it is treated as egress whatever it declares, C4)\n");
    }
    let declared: Vec<String> = flow
        .egress_scopes
        .iter()
        .map(|s| shown(s.as_str()))
        .collect();
    q.push_str(&format!(
        "  scopes:      {}\n",
        if declared.is_empty() {
            "none declared (a plain egress grant covers it)".to_owned()
        } else {
            declared.join(", ")
        }
    ));
    q.push_str(&format!("  why:         {}\n", shown(&need.reason)));
    let store = store
        .map(|p| format!(" in {}", p.display()))
        .unwrap_or_default();
    q.push_str(&format!(
        "  [g] grant:   record consent{store}, as `{}` would, and query it in this run\n",
        need.command
    ));
    q.push_str("  [s] skip:    send it nothing this run (the default)\n");
    q.push_str(&format!(
        "Grant consent to `{}`? [g/s, default s]: ",
        shown(&need.name)
    ));
    q
}

/// One line per record written.
fn granted(name: &str, records: &[ConsentRecord], store: Option<&std::path::Path>) -> String {
    let mut out = String::new();
    for r in records {
        let (what, by) = match r {
            ConsentRecord::Receipt(r) => {
                let pinned = format!("{} {}", shown(&r.provider_name), shown(&r.provider_version));
                let what = match &r.scope {
                    None => format!("egress grant for {pinned}"),
                    Some(scope) => format!("receipt for {pinned} scope {}", shown(scope.as_str())),
                };
                (what, &r.grantor.id)
            }
            ConsentRecord::Revocation(_) => continue,
        };
        out.push_str(&format!("cgp: recorded {what} by {}\n", shown(by)));
    }
    if let Some(p) = store {
        out.push_str(&format!("cgp: in {}; ", p.display()));
    } else {
        out.push_str("cgp: ");
    }
    out.push_str(&format!(
        "`cgp consent revoke {}` withdraws it\n",
        contextgraph_engine::shell_quote(name)
    ));
    out
}

/// Ask about every provider of `engine` lacking consent, recording a grant
/// for each one the person grants. Returns the names granted; the others
/// stay refused and are reported with their grant command as usual.
pub fn ask_for_consent(
    engine: &mut Engine,
    input: &mut impl BufRead,
    out: &mut impl Write,
    grantor: &Grantor,
) -> Vec<String> {
    let mut names = Vec::new();
    for need in engine.consent_needed() {
        let store = engine
            .consent_store_path()
            .map(std::path::Path::to_path_buf);
        if ask(&need, store.as_deref(), input, out) != Choice::Grant {
            continue;
        }
        let request = GrantRequest {
            scopes: need.scopes.clone(),
            expires_at: None,
            grantor: grantor.clone(),
        };
        let _ = match engine.grant_and_enable(&need.name, &request) {
            Ok(records) => {
                names.push(need.name.clone());
                out.write_all(granted(&need.name, &records, store.as_deref()).as_bytes())
            }
            Err(e) => writeln!(
                out,
                "cgp: consent for `{}` was not recorded ({e}); it is skipped",
                shown(&need.name)
            ),
        };
    }
    let _ = out.flush();
    names
}

/// Ask once (again after an unrecognised answer, up to [`ATTEMPTS`]).
fn ask(
    need: &ConsentNeeded,
    store: Option<&std::path::Path>,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Choice {
    let _ = write!(out, "{}", question(need, store));
    for attempt in 1..=ATTEMPTS {
        let _ = out.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            // End of input (Ctrl-D) or an unreadable terminal: skip.
            Ok(0) | Err(_) => {
                let _ = writeln!(out, "\ncgp: no answer; `{}` is skipped", shown(&need.name));
                return Choice::Skip;
            }
            Ok(_) => {}
        }
        match parse_choice(&line) {
            Some(c) => return c,
            None if attempt < ATTEMPTS => {
                let _ = write!(out, "Please answer g (grant) or s (skip) [default s]: ");
            }
            None => {}
        }
    }
    let _ = writeln!(
        out,
        "cgp: no clear answer; `{}` is skipped",
        shown(&need.name)
    );
    Choice::Skip
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_person_at_a_terminal_is_asked() {
        assert!(interactive(false, true, true, None));
        assert!(interactive(false, true, true, Some(OsStr::new(""))));
        assert!(!interactive(true, true, true, None), "--no-input");
        assert!(!interactive(false, false, true, None), "stdin a pipe");
        assert!(!interactive(false, true, false, None), "stderr a file");
        assert!(
            !interactive(false, true, true, Some(OsStr::new("true"))),
            "CI"
        );
        assert!(!interactive(false, true, true, Some(OsStr::new("1"))), "CI");
    }

    #[test]
    fn silence_and_no_skip_only_an_explicit_yes_grants() {
        for yes in ["g", "G", "grant", "y", "yes\n", "  Yes \r\n"] {
            assert_eq!(parse_choice(yes), Some(Choice::Grant), "{yes:?}");
        }
        for no in ["", "\n", "s", "skip", "n", "NO"] {
            assert_eq!(parse_choice(no), Some(Choice::Skip), "{no:?}");
        }
        for unclear in ["maybe", "gs", "yess", "1"] {
            assert_eq!(parse_choice(unclear), None, "{unclear:?}");
        }
    }

    #[test]
    fn what_a_provider_declared_cannot_forge_lines_or_escape_sequences() {
        assert_eq!(shown("egress-test"), "egress-test");
        let evil = shown("x\n  [g] grant: nothing leaves\x1b[2K\u{202e}");
        assert!(!evil.chars().any(|c| c.is_control()), "{evil}");
        assert!(!evil.contains('\u{202e}'), "{evil}");
        assert!(
            evil.contains("\\u{a}") && evil.contains("\\u{1b}"),
            "{evil}"
        );
        let long = shown(&"a".repeat(500));
        assert_eq!(long.chars().count(), SHOWN_CHARS);
        assert!(long.ends_with('…'), "{long}");
    }
}
