//! What may be served: the workspace provider's rules applied to history.
//!
//! A path the workspace provider would refuse (the shared secrets deny-list,
//! binary and generated files, files the working tree's ignore rules
//! exclude) is never listed nor diffed, and a text holding a secret (the
//! shared content check, `contextgraph_types::secrets::secret_in_content`,
//! and CGP's own state files) is never served, wherever in history it sits:
//! a secret committed and later removed is still in the removing commit's
//! diff, and must not reach a prompt from there.

use contextgraph_search::walk::{name_gate, IgnoreRules, WalkOptions};
use contextgraph_types::secrets::{is_cgp_state, is_secret_path, secret_in_content};

/// Whether a path may appear in the index at all (decided once, when a
/// commit is indexed): not on the secrets deny-list. Ignore rules change
/// with the working tree, so they are applied at query time
/// ([`PathGate::admits`]).
pub fn indexable_path(rel_path: &str) -> bool {
    !is_secret_path(&rel_path.to_ascii_lowercase())
}

/// Whether `text` (a commit message, a diff) holds something the workspace
/// provider would refuse to serve.
pub fn text_is_refused(rel_path: &str, text: &str) -> bool {
    secret_in_content(text).is_some() || is_cgp_state(rel_path, text)
}

/// Whether a file's diff may be shown: the name gates of the walk (secret,
/// binary, generated) pass.
pub fn diffable_path(rel_path: &str) -> bool {
    name_gate(rel_path, &WalkOptions::default()).is_none()
}

/// The working tree's ignore rules, read once per answer.
pub struct PathGate {
    ignore: IgnoreRules,
}

impl PathGate {
    /// Rules for the working tree at `root` (canonical).
    pub fn new(root: &std::path::Path) -> PathGate {
        PathGate {
            ignore: IgnoreRules::new(root),
        }
    }

    /// Whether `rel_path`'s history may be served now: not a secret, not
    /// ignored by the working tree's rules.
    pub fn admits(&mut self, rel_path: &str) -> bool {
        indexable_path(rel_path) && !self.ignore.is_ignored(rel_path)
    }
}
