//! `cgp config`: PLACEHOLDER wired in by the lead so helpers never edit
//! `cli.rs` or `commands/mod.rs`; the owner replaces this whole file.

use clap::Args;

use super::CommandError;

/// Arguments of `cgp config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {}

/// Run `cgp config`.
pub fn run(_args: ConfigArgs) -> Result<(), CommandError> {
    Err("`cgp config` is not built yet".into())
}
