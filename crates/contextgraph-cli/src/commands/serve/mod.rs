//! `cgp serve <PROVIDER>`: run a built-in provider over stdio (stdout carries
//! only protocol messages; anything for a person goes to stderr), or over
//! HTTP with `--http <ADDR>` ([`http`]: one envelope per POST to `/cgp`,
//! bearer token, TLS, body limit, graceful shutdown on SIGINT/SIGTERM).

mod docs;
pub mod http;
mod read_only;
mod workspace;

use std::io::Write as _;

use clap::{Args, Subcommand};

use super::CommandError;

/// A line for a person on stderr (stdout carries only protocol messages),
/// through the terminal rule: a file or directory name, a ref name or an
/// error quoting one cannot send an escape sequence to the terminal.
fn diag(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(
        std::io::stderr(),
        "{}",
        crate::terminal::lines_for_terminal(&text.to_string())
    );
}

/// Arguments of `cgp serve`.
#[derive(Debug, Args)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub struct ServeArgs {
    /// Which provider.
    #[command(subcommand)]
    pub provider: ServeProvider,
}

/// The providers `cgp serve` can run.
#[derive(Debug, Subcommand)]
pub enum ServeProvider {
    /// Serve the Markdown and text documents of a folder as `doc` frames,
    /// one per heading section (same as `contextgraph-provider-docs <DIR>`),
    /// over stdio or, with --http, over HTTP.
    Docs(docs::DocsArgs),
    /// Serve a code repository as symbol, doc and snippet frames with a
    /// persistent index (same as `contextgraph-provider-workspace [DIR]`),
    /// over stdio or, with --http, over HTTP.
    Workspace(workspace::WorkspaceArgs),
}

/// Run `cgp serve …` until the host sends `shutdown` or closes stdin (stdio),
/// or until SIGINT/SIGTERM (HTTP).
pub fn run(args: ServeArgs) -> Result<(), CommandError> {
    match args.provider {
        ServeProvider::Docs(docs) => docs::run(docs),
        ServeProvider::Workspace(args) => workspace::run(args),
    }
}
