//! `cgp serve workspace [DIR] [--http ADDR …]`.
//!
//! Over stdio this is the workspace crate's own server. Over HTTP the index
//! is opened the same way (cache, progress, watcher, background refresh) and the
//! provider is handed to the HTTP server instead.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use contextgraph_provider_workspace::serve::{keep_fresh, serve, ServeArgs};
use contextgraph_provider_workspace::{IndexSource, WorkspaceProvider, PROVIDER_NAME};

use super::diag;
use super::http::{serve_http, HttpFlags};
use crate::commands::CommandError;

/// Arguments of `cgp serve workspace`: the workspace server's own, plus HTTP.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  Over stdio, for a host that spawns this command:
    cgp serve workspace .
  Over HTTP until Ctrl-C/SIGTERM (stderr says `cgp serve: listening on <URL>`):
    cgp serve workspace . --http 127.0.0.1:8700
    cgp inspect http http://127.0.0.1:8700/cgp --strict
  Without some ranking steps (to measure what they are worth here; said on stderr):
    CGP_RANK_SIGNALS_OFF=semantic,file_name cgp serve workspace .
    CGP_SEMANTIC=0 cgp serve workspace .       # no embedding model at all
  Step names and CGP_RANK_SIGNALS_ON: the workspace provider's README.")]
pub struct WorkspaceArgs {
    /// What to serve.
    #[command(flatten)]
    pub serve: ServeArgs,

    /// Serve from this index artifact (`cgp index build`) instead of the
    /// cache; needs --read-only.
    #[arg(long, value_name = "ARTIFACT", requires = "read_only")]
    pub index: Option<PathBuf>,

    /// Write nothing: no refresh, no watcher, no cache. Files that differ
    /// from the artifact are reported (stderr, GET /healthz), not re-indexed.
    #[arg(long, requires = "index")]
    pub read_only: bool,

    /// HTTP serving (stdio without `--http`).
    #[command(flatten)]
    pub http: HttpFlags,
}

/// Serve the workspace over stdio, or over HTTP with `--http`.
pub fn run(args: WorkspaceArgs) -> Result<(), CommandError> {
    if let Some(artifact) = &args.index {
        return super::read_only::run(&args.serve, artifact, &args.http);
    }
    let Some(addr) = &args.http.http else {
        return serve(&args.serve);
    };
    let (provider, _watch) = keep_fresh(open(&args.serve)?);
    serve_http(provider, addr, &args.http)
}

/// Open (or build) the index as the stdio server does, and keep it fresh.
fn open(args: &ServeArgs) -> Result<WorkspaceProvider, CommandError> {
    let (provider, source) = WorkspaceProvider::open(&args.dir, args.options()?)?;
    if let IndexSource::Rebuilt { reason } = &source {
        diag(format_args!("{PROVIDER_NAME}: rebuilt the index: {reason}"));
    }
    if !args.quiet {
        let stats = provider.stats();
        diag(format_args!(
            "{PROVIDER_NAME}: serving {} ({} files, {} chunks)",
            provider.root().display(),
            stats.files,
            stats.chunks
        ));
    }
    if args.refresh_secs > 0 || source == IndexSource::Loaded {
        let background = provider.clone();
        let every = Duration::from_secs(args.refresh_secs);
        let first = source == IndexSource::Loaded;
        std::thread::spawn(move || {
            // Catch up with edits made while we were not running, then poll.
            let mut due = first;
            loop {
                if due || !every.is_zero() {
                    if let Err(e) = background.refresh() {
                        diag(format_args!("{e}"));
                    }
                }
                due = false;
                if every.is_zero() {
                    break;
                }
                std::thread::sleep(every);
            }
        });
    }
    Ok(provider)
}
