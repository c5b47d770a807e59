//! `cgp`, the Context Graph Protocol command line.
//!
//! Layout, so each later command is one more file:
//! - `cli.rs`: the clap definitions of the top level (`cgp <COMMAND>`);
//! - `commands/`: one module per command (`serve/` today; `context`,
//!   `inspect`, `consent`, `mcp` slot in beside it), each owning its
//!   arguments and a `run` function;
//! - `output.rs`: how results and errors reach a person — data on stdout,
//!   errors on stderr, colour only when wanted (`NO_COLOR`), and a closed
//!   stdout ending the program quietly instead of panicking.
//!
//! Exit codes: 0 success, 1 failure (the error is on stderr), 2 usage error,
//! 3 `cgp context` found nothing for the goal.

mod bus_error;
mod cli;
mod commands;
mod output;
mod safe_write;
mod terminal;
mod validate;
mod width;

use std::process::ExitCode;

fn main() -> ExitCode {
    // `cgp inspect host` re-runs this binary as the host suite's stdio
    // adversaries, marked by an environment variable it sets on those
    // children only; they take no cgp arguments and have no command.
    if contextgraph_conformance_host::adversary_requested() {
        let code = contextgraph_conformance_host::serve_adversary(std::env::args_os().skip(1));
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    bus_error::report_bus_errors();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let color = output::ColorChoice::from_args(&args)
        .unwrap_or_default()
        .resolve();
    let cli = match cli::parse(args, color) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    output::set_quiet(cli.quiet);
    match commands::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        // Said on stderr already, as a hint rather than an error.
        Err(error) if error.downcast_ref::<commands::NoMatch>().is_some() => {
            ExitCode::from(output::EXIT_NO_MATCH)
        }
        Err(error) => {
            output::report_error(&*error, color);
            if error.downcast_ref::<commands::UsageError>().is_some() {
                ExitCode::from(output::EXIT_USAGE)
            } else {
                ExitCode::from(output::EXIT_FAILURE)
            }
        }
    }
}
