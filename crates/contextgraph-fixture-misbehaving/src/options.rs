//! Command-line options, parsed by hand (a handful of flags does not justify
//! a parser dependency in a test tool), and the `--help` text, which is
//! generated from the mode catalogue so it can never miss a mode.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::mode::Mode;

/// The name the provider announces unless `--name` says otherwise (H2).
pub const PROVIDER_NAME: &str = "misbehaving-provider";

/// `slow-reply`'s delay when `--delay-ms` is not given.
pub const DEFAULT_DELAY_MS: u64 = 2000;

/// The longest `--delay-ms` accepted: ten minutes. Longer is a typo, and a
/// test tool must not be able to park a host's test run for hours.
pub const MAX_DELAY_MS: u64 = 600_000;

/// The binary's name, for spawning it.
pub const BIN_NAME: &str = "contextgraph-misbehaving-provider";

/// How to run the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The behaviour.
    pub mode: Mode,
    /// Serve this folder's text files instead of the built-in corpus.
    pub dir: Option<PathBuf>,
    /// `slow-reply`'s delay before each reply.
    pub delay: Duration,
    /// Provider name announced at the handshake (and used as provider id).
    pub name: String,
    /// Provider version announced at the handshake.
    pub version: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Normal,
            dir: None,
            delay: Duration::from_millis(DEFAULT_DELAY_MS),
            name: PROVIDER_NAME.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Serve the protocol on stdin/stdout.
    Serve(Options),
    /// Print [`usage`].
    Help,
    /// Print every mode name, one per line (for scripts that iterate modes).
    ListModes,
}

/// A command line that cannot be run; the message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

/// Parse the arguments after the program name.
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| UsageError(format!("argument {a:?} is not valid UTF-8")))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg, None),
        };
        let mut value = |name: &str| -> Result<String, UsageError> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => args
                    .next()
                    .and_then(|v| v.into_string().ok())
                    .ok_or_else(|| UsageError(format!("{name} needs a value"))),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--list-modes" => return Ok(Command::ListModes),
            "--mode" => {
                let given = value("--mode")?;
                options.mode = given.parse().map_err(|e| UsageError(format!("{e}")))?;
            }
            "--dir" => options.dir = Some(PathBuf::from(value("--dir")?)),
            "--delay-ms" => {
                let given = value("--delay-ms")?;
                let ms: u64 = given.parse().map_err(|_| {
                    UsageError(format!(
                        "--delay-ms {given:?} is not a whole number of milliseconds"
                    ))
                })?;
                if ms > MAX_DELAY_MS {
                    return Err(UsageError(format!(
                        "--delay-ms {ms} is over the {MAX_DELAY_MS} ms limit"
                    )));
                }
                options.delay = Duration::from_millis(ms);
            }
            "--name" => options.name = non_blank("--name", value("--name")?)?,
            "--version" => options.version = non_blank("--version", value("--version")?)?,
            other => return Err(UsageError(format!("unknown argument {other:?}"))),
        }
    }
    Ok(Command::Serve(options))
}

/// H2: the announced name and version must not be empty, so refuse to start
/// with one rather than break a rule no mode asked to break.
fn non_blank(flag: &str, value: String) -> Result<String, UsageError> {
    if value.trim().is_empty() {
        Err(UsageError(format!(
            "{flag} must not be empty (H2: hosts reject an empty provider name or version)"
        )))
    } else {
        Ok(value)
    }
}

/// The `--help` text, listing every mode with its rule and description.
pub fn usage() -> String {
    let mut text = String::from(
        "\
A Context Graph Protocol provider that misbehaves on purpose, one guarantee at a
time, so hosts and conformance suites can prove they catch each fault. It speaks
NDJSON on stdin/stdout; stderr carries diagnostics only.

Usage: contextgraph-misbehaving-provider [--mode <MODE>] [--dir <DIR>] [--delay-ms <N>]
                                         [--name <NAME>] [--version <VER>]

Options:
  --mode <MODE>     Behaviour to exhibit (default: normal); see the list below
  --dir <DIR>       Serve the text files of DIR (one frame per file, or per 20-line
                    window) instead of the built-in corpus
  --delay-ms <N>    Delay before each reply in slow-reply mode (default: 2000)
  --name <NAME>     Provider name announced at the handshake (default: misbehaving-provider)
  --version <VER>   Provider version announced at the handshake (default: the crate version)
  --list-modes      Print the mode names, one per line
  -h, --help        Print this help

Without --dir the provider serves a built-in corpus whose files it writes into a
private temporary folder at start-up (so file provenance can be re-read from disk)
and deletes on exit.

Modes (rule broken or exercised, then what the mode does):
",
    );
    let width = Mode::ALL.iter().map(|m| m.name().len()).max().unwrap_or(0);
    for mode in Mode::ALL {
        let _ = writeln!(
            text,
            "  {:width$}  [{}] {}",
            mode.name(),
            mode.rule(),
            mode.description()
        );
    }
    text.push_str("\nExit codes: 0 after shutdown or end of input, 1 on a failure, 2 on a usage error,\n3 when a crash mode crashes.\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, UsageError> {
        parse_args(args.iter().map(OsString::from))
    }

    #[test]
    fn defaults_serve_normal_with_the_builtin_corpus() {
        assert_eq!(parse(&[]), Ok(Command::Serve(Options::default())));
    }

    #[test]
    fn every_flag_is_read_in_both_spellings() {
        let Ok(Command::Serve(o)) = parse(&[
            "--mode",
            "slow-reply",
            "--delay-ms=25",
            "--dir",
            "/tmp/x",
            "--name=n",
            "--version",
            "9",
        ]) else {
            panic!("parses");
        };
        assert_eq!(o.mode, Mode::SlowReply);
        assert_eq!(o.delay, Duration::from_millis(25));
        assert_eq!(o.dir, Some(PathBuf::from("/tmp/x")));
        assert_eq!((o.name.as_str(), o.version.as_str()), ("n", "9"));
    }

    #[test]
    fn bad_command_lines_say_what_to_fix() {
        for (args, needle) in [
            (&["--mode", "nope"][..], "nope"),
            (&["--mode"][..], "needs a value"),
            (&["--delay-ms", "soon"][..], "soon"),
            (&["--delay-ms", "600001"][..], "limit"),
            (&["--name", " "][..], "H2"),
            (&["--frobnicate"][..], "--frobnicate"),
        ] {
            let err = parse(args).unwrap_err();
            assert!(err.to_string().contains(needle), "{args:?}: {err}");
        }
    }
}
