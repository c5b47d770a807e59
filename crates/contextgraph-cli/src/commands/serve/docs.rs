//! `cgp serve docs <DIR>`.

use std::path::PathBuf;

use clap::Args;
use contextgraph_provider_docs::{serve_dir, DocsConfig, DEFAULT_MAX_FILE_BYTES};

use crate::commands::CommandError;

/// Arguments of `cgp serve docs`.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  cgp serve docs ./docs")]
pub struct DocsArgs {
    /// The folder to serve, recursively (hidden entries, target/ and
    /// node_modules/ are skipped; symlinks never lead out of it).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Skip documents larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: u64,
}

/// Serve the folder over stdio.
pub fn run(args: DocsArgs) -> Result<(), CommandError> {
    serve_dir(DocsConfig::new(args.dir).with_max_file_bytes(args.max_file_bytes))?;
    Ok(())
}
