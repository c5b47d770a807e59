//! `contextgraph-provider-workspace [DIR]`: serve a workspace over stdio
//! (the same as `cgp serve workspace [DIR]`).

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser;
use contextgraph_provider_workspace::serve::{serve, ServeArgs};

/// Serve a workspace directory as a Context Graph Protocol provider over stdio.
#[derive(Debug, Parser)]
#[command(name = "contextgraph-provider-workspace", version)]
struct Cli {
    #[command(flatten)]
    args: ServeArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match serve(&cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{e}");
            ExitCode::FAILURE
        }
    }
}
