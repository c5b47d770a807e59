//! `contextgraph-provider-workspace <DIR>`: serve a workspace over stdio.
//!
//! The index is loaded from the cache when it is trustworthy (queries are
//! answered from it at once) or built with a progress bar on stderr; a
//! background thread then keeps it fresh. stdout carries only the protocol.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use contextgraph_provider::serve_stdio;
use contextgraph_provider_workspace::{
    CacheLocation, IndexSource, WorkspaceOptions, WorkspaceProvider, PROVIDER_NAME,
};

/// Serve a workspace directory as a Context Graph Protocol provider over stdio.
#[derive(Debug, Parser)]
#[command(name = "contextgraph-provider-workspace", version)]
struct Args {
    /// The workspace directory.
    dir: PathBuf,
    /// Base directory of the persistent index (default: $CONTEXTGRAPH_WORKSPACE_CACHE,
    /// else $XDG_CACHE_HOME/contextgraph/workspace, else ~/.cache/contextgraph/workspace).
    #[arg(long, conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,
    /// Keep the index in memory only.
    #[arg(long)]
    no_cache: bool,
    /// Also index secret-looking files (.env*, keys, credentials). Off by default.
    #[arg(long)]
    include_secrets: bool,
    /// Seconds between background refreshes (0 disables them).
    #[arg(long, default_value_t = 30)]
    refresh_secs: u64,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut options = WorkspaceOptions {
        progress: !args.quiet,
        cache: match (&args.cache_dir, args.no_cache) {
            (_, true) => CacheLocation::Disabled,
            (Some(dir), false) => CacheLocation::Base(dir.clone()),
            (None, false) => CacheLocation::Default,
        },
        ..WorkspaceOptions::default()
    };
    options.walk.include_secrets = args.include_secrets;
    let (provider, source) = match WorkspaceProvider::open(&args.dir, options) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if let IndexSource::Rebuilt { reason } = &source {
        eprintln!("{PROVIDER_NAME}: rebuilt the index: {reason}");
    }
    let stats = provider.stats();
    if !args.quiet {
        eprintln!(
            "{PROVIDER_NAME}: serving {} ({} files, {} chunks)",
            provider.root().display(),
            stats.files,
            stats.chunks
        );
    }
    if args.refresh_secs > 0 || source == IndexSource::Loaded {
        let background = provider.clone();
        let every = Duration::from_secs(args.refresh_secs);
        std::thread::spawn(move || {
            // Catch up with edits made while we were not running, then poll.
            let mut first = source == IndexSource::Loaded;
            loop {
                if first || !every.is_zero() {
                    if let Err(e) = background.refresh() {
                        eprintln!("{e}");
                    }
                }
                first = false;
                if every.is_zero() {
                    break;
                }
                std::thread::sleep(every);
            }
        });
    }
    match serve_stdio(provider) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{PROVIDER_NAME}: {e}");
            ExitCode::FAILURE
        }
    }
}
