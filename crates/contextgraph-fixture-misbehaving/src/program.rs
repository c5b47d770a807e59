//! The `contextgraph-misbehaving-provider` program as a function, so every
//! crate whose tests spawn the fixture can give it a `[[bin]]` of its own
//! (found through `CARGO_BIN_EXE_<name>`, no nested `cargo build`) with the
//! same arguments, output and exit codes.

use std::io::Write;
use std::process::ExitCode;

use crate::{parse_args, run, usage, Command, Mode, PROVIDER_NAME};

/// Write to stdout, ignoring a closed pipe (nothing useful is left to do).
fn print_stdout(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Run the fixture on this process's arguments and standard streams. Exit
/// codes: 0 after `shutdown` or end of input, 1 on a failure, 2 on a usage
/// error, 3 when a crash mode crashes.
pub fn main() -> ExitCode {
    match parse_args(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            print_stdout(&usage());
            ExitCode::SUCCESS
        }
        Ok(Command::ListModes) => {
            let names: String = Mode::ALL.iter().map(|m| format!("{m}\n")).collect();
            print_stdout(&names);
            ExitCode::SUCCESS
        }
        Ok(Command::Serve(options)) => ExitCode::from(u8::try_from(run(&options)).unwrap_or(1)),
        Err(e) => {
            eprintln!("{PROVIDER_NAME}: {e}\n\n{}", usage());
            ExitCode::from(2)
        }
    }
}
