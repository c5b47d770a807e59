//! `contextgraph-provider-docs <DIR>`: serve a folder's documents over stdio.
//!
//! Exit codes: 0 after `shutdown` or end of input, 1 when the folder cannot
//! be served or the pipe fails, 2 on a usage error. Errors go to stderr;
//! stdout carries only protocol messages.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use contextgraph_provider_docs::{serve_dir, DocsConfig, PROVIDER_NAME};

const USAGE: &str = "\
Serve the Markdown and plain-text documents of a folder as Context Graph Protocol
`doc` frames over stdio (one JSON envelope per line on stdin/stdout).

Usage: contextgraph-provider-docs <DIR>

Arguments:
  <DIR>  The folder to serve (recursively; hidden, target/ and node_modules/ skipped)

Options:
  -h, --help     Print this help
  -V, --version  Print the version

Example:
  contextgraph-provider-docs ./docs

Exit codes: 0 ok, 1 failure, 2 usage error.
";

enum Args {
    Serve(PathBuf),
    Help,
    Version,
}

fn parse(args: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let mut dir = None;
    for arg in args {
        match arg.to_str() {
            Some("-h" | "--help") => return Ok(Args::Help),
            Some("-V" | "--version") => return Ok(Args::Version),
            Some(flag) if flag.starts_with('-') && flag.len() > 1 => {
                return Err(format!("unknown option {flag:?}"))
            }
            _ if dir.is_some() => return Err("expected exactly one <DIR>".to_owned()),
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    dir.map(Args::Serve)
        .ok_or_else(|| "missing <DIR>".to_owned())
}

/// Write to stdout, ignoring a closed pipe (nothing useful is left to do).
fn print_stdout(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Write to stderr; unlike `eprintln!`, a closed stderr is not a panic.
fn print_stderr(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

fn main() -> ExitCode {
    match parse(std::env::args_os().skip(1)) {
        Ok(Args::Help) => {
            print_stdout(USAGE);
            ExitCode::SUCCESS
        }
        Ok(Args::Version) => {
            print_stdout(&format!("{PROVIDER_NAME} {}\n", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        Ok(Args::Serve(dir)) => match serve_dir(DocsConfig::new(dir)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                print_stderr(&format!("error: {e}"));
                ExitCode::FAILURE
            }
        },
        Err(problem) => {
            print_stderr(&format!("error: {problem}\n\n{USAGE}"));
            ExitCode::from(2)
        }
    }
}
