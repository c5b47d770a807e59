//! How `cgp` talks to a person: errors on stderr (coloured only when that
//! helps), data on stdout, and documented exit codes.

use std::io::{IsTerminal, Write};

/// Exit code of a command that failed (the reason is on stderr).
pub const EXIT_FAILURE: u8 = 1;

/// Exit code of a usage error (clap uses the same).
pub const EXIT_USAGE: u8 = 2;

/// Exit code of `cgp context` when no frame matched the goal: the run
/// worked, but there is nothing to give a model (like grep's 1, but kept
/// apart from cgp's own failure code).
pub const EXIT_NO_MATCH: u8 = 3;

/// `--color`: when to colour messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal, unless `NO_COLOR` is set (or
    /// `CLICOLOR_FORCE` asks for colour in a pipe).
    #[default]
    Auto,
    /// Always colour, even in a pipe or a file (`NO_COLOR` does not override an explicit flag).
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// The value of the last `--color VALUE` or `--color=VALUE` in `args`,
    /// read before clap parses them so that clap's own usage errors honour
    /// it too; a bad value is left for clap to refuse.
    pub fn from_args(args: &[std::ffi::OsString]) -> Option<ColorChoice> {
        let mut found = None;
        let mut iter = args.iter().skip(1);
        while let Some(arg) = iter.next() {
            if arg == "--" {
                break;
            }
            let value = if arg == "--color" {
                iter.next().and_then(|v| v.to_str())
            } else {
                arg.to_str().and_then(|a| a.strip_prefix("--color="))
            };
            if let Some(v) = value {
                found = <ColorChoice as clap::ValueEnum>::from_str(v, false)
                    .ok()
                    .or(found);
            }
        }
        found
    }

    /// The mode this choice means here and now.
    pub fn resolve(self) -> ColorMode {
        match self {
            ColorChoice::Auto => ColorMode::detect(),
            ColorChoice::Always => ColorMode::Always,
            ColorChoice::Never => ColorMode::Never,
        }
    }
}

/// The `format_version` every `--json` document of `cgp` carries at its top
/// level: bumped when a field changes meaning or disappears (new fields may
/// appear within a version, so readers ignore keys they do not know).
/// Version 1: a list is never the top level (`cgp providers --json` is
/// `{"format_version":1,"providers":[…]}`, `cgp consent grant --json`
/// `{"format_version":1,"records":[…]}`), and `cgp context --json` adds
/// `rank` and `score` to each `audit.frames` entry, sorted by rank.
pub const JSON_FORMAT_VERSION: u32 = 1;

/// `value` as a `--json` document: an object gets `format_version`; a list
/// becomes `{"format_version": …, list_key: [the list]}`.
pub fn json_document(list_key: &str, value: serde_json::Value) -> serde_json::Value {
    let version = serde_json::Value::from(JSON_FORMAT_VERSION);
    match value {
        serde_json::Value::Object(mut map) => {
            map.insert("format_version".to_owned(), version);
            serde_json::Value::Object(map)
        }
        other => serde_json::json!({ "format_version": version, list_key: other }),
    }
}

/// Write a `--json` document (see [`json_document`]) to stdout, pretty, with
/// a final newline; a closed stdout is a normal end.
pub fn print_json(
    list_key: &str,
    value: &impl serde::Serialize,
) -> Result<(), crate::commands::CommandError> {
    let value =
        serde_json::to_value(value).map_err(|e| format!("cannot render the JSON output: {e}"))?;
    let document = json_document(list_key, value);
    let mut stdout = std::io::stdout().lock();
    let written = serde_json::to_writer_pretty(&mut stdout, &document)
        .map_err(std::io::Error::from)
        .and_then(|()| stdout.write_all(b"\n"));
    finish_stdout(written.and_then(|()| stdout.flush()))
}

/// Whether to colour messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    /// Colour (stderr is a terminal, or `CLICOLOR_FORCE` asks for it).
    Always,
    /// Plain text.
    Never,
}

impl ColorMode {
    /// `NO_COLOR` (set and non-empty, <https://no-color.org>) always wins;
    /// then `CLICOLOR_FORCE` (set and not `0`); otherwise colour only when
    /// stderr is a terminal, since escape codes in a log file are noise.
    pub fn detect() -> Self {
        let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if set("NO_COLOR").is_some() {
            ColorMode::Never
        } else if set("CLICOLOR_FORCE").is_some_and(|v| v != "0") || std::io::stderr().is_terminal()
        {
            ColorMode::Always
        } else {
            ColorMode::Never
        }
    }

    /// The same choice for clap's help and usage messages.
    pub fn clap_choice(self) -> clap::ColorChoice {
        match self {
            ColorMode::Always => clap::ColorChoice::Always,
            ColorMode::Never => clap::ColorChoice::Never,
        }
    }
}

static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `-q`: from now on, no progress, notes or hints on stderr (warnings and
/// errors are still printed).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `-q` was given.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Print `error` on stderr as `error: …`. A closed stderr is ignored: the
/// exit code still tells the caller.
pub fn report_error(error: &dyn std::error::Error, color: ColorMode) {
    let prefix = match color {
        ColorMode::Always => "\x1b[1;31merror:\x1b[0m",
        ColorMode::Never => "error:",
    };
    // Errors quote file names, provider text and peers' messages.
    let text = crate::terminal::lines_for_terminal(&error.to_string());
    let _ = writeln!(std::io::stderr().lock(), "{prefix} {text}");
}

/// Turn the result of writing a command's data to stdout into the command's
/// result: a closed pipe (`cgp context … | head`) is a normal end, not an
/// error and never a panic; any other write failure is reported.
pub fn finish_stdout(written: std::io::Result<()>) -> Result<(), crate::commands::CommandError> {
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write to stdout: {e}").into()),
    }
}
