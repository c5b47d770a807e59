//! `cgp providers`: PLACEHOLDER wired in by the lead so helpers never edit
//! `cli.rs` or `commands/mod.rs`; the owner replaces this whole file.

use clap::Args;

use super::CommandError;

/// Arguments of `cgp providers`.
#[derive(Debug, Args)]
pub struct ProvidersArgs {}

/// Run `cgp providers`.
pub fn run(_args: ProvidersArgs) -> Result<(), CommandError> {
    Err("`cgp providers` is not built yet".into())
}
