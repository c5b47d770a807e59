//! Answers come from the files as they are now: before each answer the
//! in-process workspace providers' indexes are brought up to date with the
//! working tree (a metadata scan, then only what changed is re-read), and a
//! long-running engine also watches the tree; while the watcher demonstrably
//! keeps up, the scan is skipped (`contextgraph_search::watch_trust`). What a deadline cut short is named in the answer's
//! warnings instead of being served silently stale.

use std::time::Duration;

use contextgraph_provider_workspace::{WatchHandle, WorkspaceProvider};

/// Longest the check before an answer may spend re-indexing; files not
/// reached are listed in the answer's warnings.
pub(crate) const FRESHNESS_DEADLINE: Duration = Duration::from_secs(5);

/// How long the watcher waits after the last change of a burst.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(200);

/// Most pending files named in one warning.
const MAX_NAMED: usize = 10;

/// The engine's in-process workspace indexes.
#[derive(Default)]
pub(crate) struct FreshWorkspaces {
    providers: Vec<(String, WorkspaceProvider)>,
    watches: Vec<WatchHandle>,
}

impl FreshWorkspaces {
    /// Track `provider` (configured as `name`); with `watch`, also follow
    /// the file system. A watcher that cannot start is a warning: the check
    /// before each answer still keeps answers fresh.
    pub(crate) fn add(
        &mut self,
        name: &str,
        provider: WorkspaceProvider,
        watch: bool,
        warnings: &mut Vec<String>,
    ) {
        if watch {
            let label = name.to_owned();
            match provider.workspace().watch(WATCH_DEBOUNCE, move |e| {
                eprintln!("{label}: background refresh failed: {e}");
            }) {
                Ok(handle) => self.watches.push(handle),
                Err(e) => warnings.push(format!("{name}: {e}")),
            }
        }
        self.providers.push((name.to_owned(), provider));
    }

    /// Stop the watchers and leave the indexes in memory for the process's
    /// exit to reclaim (see [`Engine::shutdown_for_exit`](crate::Engine::shutdown_for_exit)).
    pub(crate) fn leave_to_exit(self) {
        drop(self.watches);
        std::mem::forget(self.providers);
    }

    /// Bring every index up to date within [`FRESHNESS_DEADLINE`]; the
    /// warnings name what could not be re-indexed in time.
    pub(crate) async fn bring_up_to_date(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for (name, provider) in &self.providers {
            let provider = provider.clone();
            // Skipped while the watcher keeps the index current (see
            // contextgraph_search::watch_trust); every frame's region is
            // still checked against its file's bytes as it is served.
            let done = tokio::task::spawn_blocking(move || {
                provider.workspace().refresh_for_query(FRESHNESS_DEADLINE)
            })
            .await;
            match done {
                Ok(Ok(Some(report))) if !report.pending.is_empty() => {
                    warnings.push(pending_warning(name, &report.pending));
                }
                Ok(Ok(_)) => {}
                Ok(Err(e)) => warnings.push(format!("{name}: {e}")),
                Err(e) => warnings.push(format!("{name}: refreshing the index failed: {e}")),
            }
        }
        warnings
    }
}

/// "workspace: 3 changed files were not re-indexed in time …: a, b, c".
pub(crate) fn pending_warning(name: &str, pending: &[String]) -> String {
    let mut named = pending
        .iter()
        .take(MAX_NAMED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if pending.len() > MAX_NAMED {
        named.push_str(&format!(" and {} more", pending.len() - MAX_NAMED));
    }
    format!(
        "{name}: {} changed file(s) not re-indexed within {} s, so this answer may miss or omit their current content: {named}",
        pending.len(),
        FRESHNESS_DEADLINE.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_names_pending_files_and_counts_the_rest() {
        let pending: Vec<String> = (0..12).map(|i| format!("src/f{i}.rs")).collect();
        let w = pending_warning("workspace", &pending);
        assert!(w.starts_with("workspace: 12 changed file(s)"), "{w}");
        assert!(w.contains("src/f0.rs") && w.contains("src/f9.rs"), "{w}");
        assert!(!w.contains("src/f10.rs"), "{w}");
        assert!(w.ends_with(" and 2 more"), "{w}");
    }
}
