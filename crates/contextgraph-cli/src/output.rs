//! How `cgp` talks to a person: errors on stderr (coloured only when that
//! helps), data on stdout, and documented exit codes.

use std::io::{IsTerminal, Write};

/// Exit code of a command that failed (the reason is on stderr).
pub const EXIT_FAILURE: u8 = 1;

/// Exit code of a usage error (clap uses the same).
pub const EXIT_USAGE: u8 = 2;

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
