//! Keeping a long-running server's index fresh: a file-system watcher whose
//! events, debounced, trigger a [`Workspace::refresh`].
//!
//! The watcher only says *that* something changed; the refresh's metadata
//! scan decides *what*. While it demonstrably keeps up, an answer skips the
//! scan of the whole tree ([`Workspace::refresh_for_query`]); the rule, and
//! what makes it scan again, is in [`crate::watch_trust`].

use std::path::{Component, Path};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher as _};

use crate::watch_trust::WatchTrust;
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

/// A running watcher; dropping it stops watching, ends its thread, and
/// makes answers scan the tree again.
pub struct WatchHandle {
    _watcher: notify::RecommendedWatcher,
    workspace: Workspace,
    trust: Arc<WatchTrust>,
    wake: Sender<()>,
}

impl std::fmt::Debug for WatchHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchHandle").finish_non_exhaustive()
    }
}

impl WatchHandle {
    /// What the watcher does when the kernel reports its event queue
    /// overflowed (events were lost), for tests that cannot fill a real
    /// queue: answers scan until the next refresh completes.
    #[doc(hidden)]
    pub fn simulate_overflow(&self) {
        self.trust.overflowed();
        let _ = self.wake.send(());
    }

    /// What the watcher does when it reports an error (a watch that could
    /// not be added or was dropped), for tests: answers scan from now on.
    #[doc(hidden)]
    pub fn simulate_error(&self, error: &str) {
        self.trust
            .distrust_because(format!("the file watcher failed: {error}"));
        let _ = self.wake.send(());
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        let mut slot = self
            .workspace
            .shared
            .watch_trust
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_some_and(|t| Arc::ptr_eq(t, &self.trust)) {
            *slot = None;
        }
    }
}

/// `path` relative to `root`, `/`-separated, as the index names files.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<&str> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect();
    Some(parts.join("/"))
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
        let wake = tx.clone();
        let trust = Arc::new(WatchTrust::new(&root));
        let seen = Arc::clone(&trust);
        let filter_root = root.clone();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let wanted = match &event {
                    Ok(e) if e.need_rescan() => {
                        // Events were lost: scan until a refresh completes.
                        seen.overflowed();
                        true
                    }
                    // Reading a file (ours included: a refresh reads what
                    // changed) changes nothing.
                    Ok(e) if matches!(e.kind, notify::EventKind::Access(_)) => false,
                    Ok(e) => {
                        let paths: Vec<String> = e
                            .paths
                            .iter()
                            .filter(|p| relevant(&filter_root, p))
                            .filter_map(|p| relative(&filter_root, p))
                            .collect();
                        if !paths.is_empty() {
                            seen.saw_change(paths.iter().map(String::as_str));
                        }
                        !paths.is_empty()
                    }
                    Err(e) => {
                        seen.distrust_because(format!("the file watcher failed: {e}"));
                        true
                    }
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
        // Only now that events flow: a refresh completing from here on
        // covers every change before it.
        *self
            .shared
            .watch_trust
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(&trust));
        Ok(WatchHandle {
            _watcher: watcher,
            workspace: self.clone(),
            trust,
            wake,
        })
    }
}
