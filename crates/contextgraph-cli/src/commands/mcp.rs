//! `cgp mcp`: PLACEHOLDER wired in by the lead so helpers never edit
//! `cli.rs` or `commands/mod.rs`; the owner replaces this whole file.

use clap::Args;

use super::CommandError;

/// Arguments of `cgp mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {}

/// Run `cgp mcp`.
pub fn run(_args: McpArgs) -> Result<(), CommandError> {
    Err("`cgp mcp` is not built yet".into())
}
