//! `cgp.toml`: which providers a Context Graph Protocol host uses, and how.
//!
//! # Where it is found
//!
//! 1. The **per-user** file: `$CGP_CONFIG` if set (then it must exist),
//!    else `$XDG_CONFIG_HOME/cgp/cgp.toml`, else `~/.config/cgp/cgp.toml`.
//! 2. The **workspace** file: the first `cgp.toml` walking up from the
//!    workspace directory, stopping at the repository root (the directory
//!    holding `.git`) or the home directory, and passing over files that
//!    another user owns. It wins over the per-user file — but until the
//!    user trusts it (`cgp trust`, see [`trust`]) its stdio and HTTP
//!    providers are skipped, and its `consent_store` is never honoured.
//!
//! An explicit file (`cgp … --config PATH`) replaces both. Top-level keys
//! merge key by key; providers merge by name (the workspace's definition of
//! a name replaces the user's whole). With no file at all, the
//! configuration is [`Config::default`]: the built-in `workspace` provider
//! on the workspace directory, and no network.
//!
//! # Format
//!
//! ```toml
//! budget = 8000              # model tokens for the whole prompt (default 8000)
//! safety_factor = 1.35       # model tokens per budget token (default 1.35)
//! timeout_ms = 10000         # providers without their own (default 10 s)
//! strict_audit = false       # true: repair nothing, quarantine every faulty answer
//! consent_store = "~/.local/share/contextgraph/consent.ndjson"  # optional
//!
//! [providers.workspace]      # built in, always present unless redefined
//! type = "workspace"         # may be omitted for this name
//! dir = "."                  # default: the workspace the command runs on
//! weight = 2                 # share of the budget relative to others (default 1)
//!
//! [providers.history]        # built in: the git history, on in a git working tree
//! enabled = false            # the one line that turns it off
//!
//! [providers.docs]
//! type = "docs"              # built in: a folder's Markdown
//! dir = "docs"
//!
//! [providers.notes]          # the key: frames, consent and reports go under `notes`
//! type = "stdio"             # implied by `command`
//! command = "cgp"            # a bare name is looked up on PATH
//! args = ["serve", "docs", "./notes"]
//! env = { RUST_LOG = "warn" }# set in its (otherwise scrubbed) environment
//! pass_env = ["LANG"]        # passed through from yours
//! cwd = "."
//! timeout_ms = 3000
//!
//! [providers.search]
//! type = "http"              # implied by `url`
//! url = "https://search.example.com/cgp"
//! token_env = "SEARCH_TOKEN" # or token_file = "~/.config/cgp/search.token"
//! enabled = false
//! ```
//!
//! Relative paths are relative to the file's directory; `~/` is `$HOME`.
//!
//! # Errors
//!
//! Every mistake is an error naming the file, line, column and key
//! ([`ConfigError::At`]): unknown keys (a misspelling must not be silently
//! ignored), keys of another provider type, values out of range, and a
//! literal `token` key — a bearer token is read from an environment
//! variable or a file, never from the configuration (C8), and the error
//! never repeats the value.
#![warn(missing_docs)]

mod env;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod load;
mod model;
mod owner;
mod parse;
mod render;
mod restrict;
mod token;
pub mod trust;
mod warning;

pub use env::{Environment, CONFIG_ENV};
pub use error::ConfigError;
pub use load::{config_files, discover_workspace_file, find_workspace_file, read_file, Discovery};
pub use model::{
    Config, Origin, ProviderConfig, ProviderKind, Setting, TokenSource, DEFAULT_BUDGET,
    DEFAULT_SAFETY_FACTOR, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MAX_WEIGHT,
};
pub use parse::is_valid_provider_name;
pub use token::TokenError;
pub use trust::{TrustState, TrustStore};
pub use warning::ConfigWarning;

/// The configuration file's name.
pub const FILE_NAME: &str = "cgp.toml";
