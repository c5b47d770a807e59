//! `cgp bridge`: PLACEHOLDER wired in by the lead so helpers never edit
//! `cli.rs` or `commands/mod.rs`; the owner replaces this whole file.

use clap::Args;

use super::CommandError;

/// Arguments of `cgp bridge`.
#[derive(Debug, Args)]
pub struct BridgeArgs {}

/// Run `cgp bridge`.
pub fn run(_args: BridgeArgs) -> Result<(), CommandError> {
    Err("`cgp bridge` is not built yet".into())
}
