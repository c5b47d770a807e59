//! Keeping a long-running server's index fresh: a file-system watcher whose
//! events, debounced, trigger a [`Workspace::refresh`].
//!
//! The watcher only says *that* something changed; the refresh's metadata
//! scan decides *what*, so a missed or coalesced event costs nothing but
//! latency, and the cheap check before each answer
//! ([`Workspace::refresh_within`]) still catches whatever the watcher has
//! not processed yet.

use std::path::{Component, Path};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use notify::{RecursiveMode, Watcher as _};

use crate::workspace::Workspace;

/// Why a watcher could not start (e.g. the inotify watch limit).
#[derive(Debug, thiserror::Error)]
#[error("cannot watch {path} for changes ({source}); answers still re-check the files first")]
pub struct WatchError {
    /// The workspace root.
    pub path: std::path::PathBuf,
    /// The watcher's error.
    #[source]
    pub source: notify::Error,
}

/// A running watcher; dropping it stops watching and ends its thread.
pub struct WatchHandle {
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for WatchHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchHandle").finish_non_exhaustive()
    }
}

/// Whether a change at `path` can matter to the index: changes inside
/// `.git` (every commit, fetch and status touches it) do not.
fn relevant(root: &Path, path: &Path) -> bool {
    let rel = path.strip_prefix(root).unwrap_or(path);
    !rel.components()
        .any(|c| matches!(c, Component::Normal(n) if n == ".git"))
}

impl Workspace {
    /// Watch the workspace and refresh the index `debounce` after the last
    /// of a burst of changes (a checkout or a formatter run is one refresh,
    /// not thousands). `on_error` hears refresh failures (an unwritable
    /// cache); the index in memory stays current regardless.
    pub fn watch(
        &self,
        debounce: Duration,
        on_error: impl Fn(&crate::IndexError) + Send + 'static,
    ) -> Result<WatchHandle, WatchError> {
        let root = self.root().to_path_buf();
        let (tx, rx) = channel::<()>();
        let filter_root = root.clone();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let wanted = match &event {
                    Ok(e) => e.paths.iter().any(|p| relevant(&filter_root, p)),
                    // An overflowed queue means "something changed".
                    Err(_) => true,
                };
                if wanted {
                    let _ = tx.send(());
                }
            })
            .map_err(|source| WatchError {
                path: root.clone(),
                source,
            })?;
        watcher
            .watch(&root, RecursiveMode::Recursive)
            .map_err(|source| WatchError {
                path: root.clone(),
                source,
            })?;
        let workspace = self.clone();
        std::thread::Builder::new()
            .name("cgp-workspace-watch".into())
            .spawn(move || {
                // Ends when the watcher (the only sender) is dropped.
                while rx.recv().is_ok() {
                    loop {
                        match rx.recv_timeout(debounce) {
                            Ok(()) => continue,
                            Err(RecvTimeoutError::Timeout) => break,
                            Err(RecvTimeoutError::Disconnected) => return,
                        }
                    }
                    if let Err(e) = workspace.refresh() {
                        on_error(&e);
                    }
                }
            })
            .map_err(|e| WatchError {
                path: root,
                source: notify::Error::io(e),
            })?;
        Ok(WatchHandle { _watcher: watcher })
    }
}
