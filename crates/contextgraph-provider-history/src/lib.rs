//! A Context Graph Protocol (CGP) provider over a git working tree's
//! history: what changed, why, and where similar changes went.
//!
//! One `episode` frame per commit: its subject and body, its author time as
//! `valid_from` (committer time as `recorded_at`), the paths it changed,
//! and — when one of them is evidence for the goal (an anchored file, a
//! path the goal names) — that path's hunks, within a per-frame and
//! per-request byte budget. A frame id is the commit id (`<id>`) or the
//! commit and the path shown (`<id>:<path>`, as `git show` spells it); its
//! content is a function of the id alone, so `verify` recomputes it:
//! `valid` while the commit is reachable from `HEAD`, `gone` once a
//! history rewrite drops it. Provenance names the commit (`git:<id>`) and,
//! per hunk, the path and the line range at that commit with the SHA-256
//! of exactly those lines (`git show <id>:<path>`).
//!
//! Ranking: BM25 of the goal's words over messages and changed paths; the
//! query's anchors pull in the commits that last changed the anchored lines
//! (blame), the commits that touched an anchored file and the files that
//! usually change with it; recency is a weak prior; `as_of` excludes every
//! commit authored or committed after it.
//!
//! Never serves what the workspace provider would refuse: the shared
//! secrets deny-list on paths, the shared content check on messages and
//! diffs, the working tree's ignore rules on paths (see [`gate`]).
//!
//! Read-only, no network, no `git` binary: libgit2 through `git2` (see the
//! README for why). The index is persisted beside the workspace index and
//! brought up to date incrementally (see [`store`], [`index_file`],
//! [`indexer`]).
//!
//! ```no_run
//! use contextgraph_provider_history::{HistoryOptions, HistoryProvider};
//! use contextgraph_provider_sdk::Provider;
//! use contextgraph_types::ContextQuery;
//!
//! let provider = HistoryProvider::open(".", HistoryOptions::default())?;
//! let answer = provider.query(&ContextQuery::new("why does the retry loop back off", 8, 2000))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod anchor;
pub mod blame;
mod error;
pub mod gate;
pub mod index_file;
pub mod indexer;
pub mod limits;
pub mod localization;
mod provider;
pub mod rank;
pub mod record;
pub mod render;
pub mod search;
pub mod store;

pub use error::HistoryError;
pub use provider::{
    working_tree_of, HistoryOptions, HistoryProvider, CHANGED_REL, PLAIN_GOAL_FRAMES,
};

/// The provider id (its `info().name`).
pub const PROVIDER_NAME: &str = "contextgraph-provider-history";

/// The version reported in the handshake and provenance `by`.
pub const PROVIDER_VERSION: &str = env!("CARGO_PKG_VERSION");
