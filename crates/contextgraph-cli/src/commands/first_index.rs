//! The first `cgp context` in a workspace builds its search index, which
//! on a large tree takes minutes: say so before it starts, so a person (or
//! an agent reading stderr) knows what is happening and that it happens
//! once. The index's own progress follows: a bar with the time left on a
//! terminal, otherwise a line when it starts, an estimate of the time left
//! once the rate is known, and a line when it ends (`contextgraph-search`'s
//! `progress` module).

use std::path::Path;

use contextgraph_config::{Config, ProviderKind};
use contextgraph_provider_workspace::store;

use crate::terminal::path_for_terminal;

/// The index directory of the workspace `dir` and whether it holds no
/// index yet (`None` when there is no cache: nothing persists, nothing to
/// announce beyond the progress).
pub fn missing_index(dir: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let root = std::fs::canonicalize(dir).ok()?;
    let entry = store::cache_dir_for(&store::default_cache_base()?, &root);
    (!entry.join("index.bin").is_file()).then_some((root, entry))
}

/// Say on stderr, for each enabled built-in workspace provider whose
/// workspace has no index yet, that this run builds it.
pub fn announce(config: &Config, workspace: &Path) {
    for provider in config.enabled_providers() {
        let ProviderKind::Workspace { dir } = &provider.kind else {
            continue;
        };
        let dir = dir.as_deref().unwrap_or(workspace);
        if let Some((root, entry)) = missing_index(dir) {
            let text = format!(
                "cgp: no index of {} yet: building it now, once (a large tree takes minutes; \
                 progress and the time left follow); later runs reuse it from {}",
                path_for_terminal(&root),
                path_for_terminal(&entry)
            );
            crate::width::say(&text);
        }
    }
}
