//! `cgp serve <PROVIDER>`: run a built-in provider over stdio. stdout carries
//! only protocol messages; anything for a person goes to stderr.

mod docs;
mod workspace;

use clap::{Args, Subcommand};

use super::CommandError;

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
    /// one per heading section (same as `contextgraph-provider-docs <DIR>`).
    Docs(docs::DocsArgs),
    /// Serve a code repository as symbol, doc and snippet frames with a
    /// persistent index (same as `contextgraph-provider-workspace [DIR]`).
    #[command(after_help = "Example:\n  cgp serve workspace .")]
    Workspace(contextgraph_provider_workspace::serve::ServeArgs),
}

/// Run `cgp serve …` until the host sends `shutdown` or closes stdin.
pub fn run(args: ServeArgs) -> Result<(), CommandError> {
    match args.provider {
        ServeProvider::Docs(docs) => docs::run(docs),
        ServeProvider::Workspace(args) => workspace::run(args),
    }
}
