//! Serving a workspace over stdio, shared by the `contextgraph-provider-workspace`
//! binary and `cgp serve workspace`.
//!
//! The index is loaded from the cache when it is trustworthy (queries are
//! answered from it at once) or built with progress on stderr; a
//! file-system watcher then keeps it fresh, and each query first checks the
//! files' metadata against it ([`keep_fresh`]). stdout carries only the
//! protocol.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use contextgraph_provider_sdk::serve_stdio;

use crate::{
    CacheLocation, IndexSource, WatchHandle, WorkspaceError, WorkspaceOptions, WorkspaceProvider,
    PROVIDER_NAME,
};

/// Arguments of a stdio workspace server.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// The workspace directory.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Base directory of the persistent index (default: $CONTEXTGRAPH_WORKSPACE_CACHE,
    /// else $XDG_CACHE_HOME/contextgraph/workspace, else ~/.cache/contextgraph/workspace).
    #[arg(long, conflicts_with = "no_cache")]
    pub cache_dir: Option<PathBuf>,
    /// Keep the index in memory only.
    #[arg(long)]
    pub no_cache: bool,
    /// Also index secret-looking files (.env*, keys, credentials). Off by default.
    #[arg(long)]
    pub include_secrets: bool,
    /// Seconds between background refreshes (0 disables them).
    #[arg(long, default_value_t = 30)]
    pub refresh_secs: u64,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// A diagnostic line on stderr; a closed stderr is not a panic.
fn diag(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Longest a server's check before each answer spends re-indexing.
pub const QUERY_FRESHNESS_DEADLINE: Duration = Duration::from_secs(2);

/// How long the watcher waits after the last change of a burst.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(200);

/// Make a server's provider answer from the files as they are: a metadata
/// check before each query, and a watcher re-indexing changes as they
/// happen (keep the handle alive while serving). A watcher that cannot
/// start is reported on stderr; the check before each query still runs.
pub fn keep_fresh(provider: WorkspaceProvider) -> (WorkspaceProvider, Option<WatchHandle>) {
    let watch = match provider.workspace().watch(WATCH_DEBOUNCE, |e| {
        diag(format_args!("{PROVIDER_NAME}: {e}"))
    }) {
        Ok(handle) => Some(handle),
        Err(e) => {
            diag(format_args!("{PROVIDER_NAME}: {e}"));
            None
        }
    };
    (provider.with_fresh_queries(QUERY_FRESHNESS_DEADLINE), watch)
}

impl ServeArgs {
    /// The options a server opens its workspace with: these arguments, and
    /// the ranking switches of the environment (`CGP_RANK_SIGNALS_OFF`,
    /// `CGP_RANK_SIGNALS_ON`, `CGP_SEMANTIC`; see
    /// [`WorkspaceOptions::with_ranking_from_env`]). A switch in force is
    /// said on stderr (unless `--quiet`), so an ablation left set by
    /// accident is seen.
    pub fn options(&self) -> Result<WorkspaceOptions, WorkspaceError> {
        let mut options = WorkspaceOptions {
            progress: !self.quiet,
            cache: match (&self.cache_dir, self.no_cache) {
                (_, true) => CacheLocation::Disabled,
                (Some(dir), false) => CacheLocation::Base(dir.clone()),
                (None, false) => CacheLocation::Default,
            },
            ..WorkspaceOptions::default()
        }
        .with_ranking_from_env()?;
        options.walk.include_secrets = self.include_secrets;
        if !self.quiet {
            if let Some(note) = ranking_note(&options) {
                diag(format_args!("{PROVIDER_NAME}: {note}"));
            }
        }
        Ok(options)
    }
}

/// What differs from the default ranking in `options`, for people
/// (`ranking switches in force: -semantic, +model_alone`), or None.
pub fn ranking_note(options: &WorkspaceOptions) -> Option<String> {
    let mut changes = options.rank_signals.changes();
    if !options.semantic {
        changes.push(format!("{}=0", contextgraph_search::SEMANTIC_VAR));
    }
    (!changes.is_empty()).then(|| format!("ranking switches in force: {}", changes.join(", ")))
}

/// Open (or build) the index and serve it over stdio until `shutdown` or end of input.
pub fn serve(args: &ServeArgs) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (provider, source) = WorkspaceProvider::open(&args.dir, args.options()?)?;
    if let IndexSource::Rebuilt { reason } = &source {
        diag(format_args!("{PROVIDER_NAME}: rebuilt the index: {reason}"));
    }
    let (provider, _watch) = keep_fresh(provider);
    let stats = provider.stats();
    if !args.quiet {
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
        std::thread::spawn(move || {
            // Catch up with edits made while we were not running, then poll.
            let mut first = source == IndexSource::Loaded;
            loop {
                if first || !every.is_zero() {
                    if let Err(e) = background.refresh() {
                        diag(format_args!("{e}"));
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
    serve_stdio(provider).map_err(|e| format!("{PROVIDER_NAME}: {e}").into())
}
