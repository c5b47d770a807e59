//! `cgp serve workspace [DIR]`.

use contextgraph_provider_workspace::serve::{serve, ServeArgs};

use crate::commands::CommandError;

/// Serve the workspace over stdio.
pub fn run(args: ServeArgs) -> Result<(), CommandError> {
    serve(&args)
}
