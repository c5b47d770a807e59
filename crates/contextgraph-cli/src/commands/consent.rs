//! `cgp consent`: PLACEHOLDER wired in by the lead so helpers never edit
//! `cli.rs` or `commands/mod.rs`; the owner replaces this whole file.

use clap::Args;

use super::CommandError;

/// Arguments of `cgp consent`.
#[derive(Debug, Args)]
pub struct ConsentArgs {}

/// Run `cgp consent`.
pub fn run(_args: ConsentArgs) -> Result<(), CommandError> {
    Err("`cgp consent` is not built yet".into())
}
