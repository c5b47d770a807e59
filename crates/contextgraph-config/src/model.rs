//! The merged configuration, as front ends and the engine use it.
//!
//! Every value remembers where it came from ([`Origin`]) so `cgp config`
//! can say which file set it. Credentials are never part of the model: an
//! HTTP provider's token is a [`TokenSource`], a *reference* to an
//! environment variable or a file, resolved only when the provider is
//! started.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

/// Default budget of a composed prompt, in model tokens.
pub const DEFAULT_BUDGET: u32 = 8000;

/// Default model-token safety factor (the protocol's suggestion).
pub const DEFAULT_SAFETY_FACTOR: f64 = contextgraph_types::DEFAULT_SAFETY_FACTOR;

/// Default per-provider timeout (handshake and each query), in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// Longest timeout accepted (10 minutes): a typo of a few zeros should not
/// make a command hang for hours.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// Largest budget weight accepted.
pub const MAX_WEIGHT: u32 = 1000;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Origin {
    /// Nobody set it: the built-in default.
    Default,
    /// A configuration file.
    File {
        /// The file.
        path: PathBuf,
        /// 1-based line of the key or table that set it.
        line: usize,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("built-in default"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
        }
    }
}

/// A top-level value and its origin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting<T> {
    /// The value in force.
    pub value: T,
    /// Who set it.
    pub origin: Origin,
}

impl<T> Setting<T> {
    /// A built-in default.
    pub fn default_value(value: T) -> Self {
        Setting {
            value,
            origin: Origin::Default,
        }
    }
}

/// The whole merged configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// Budget of a composed prompt in model tokens, when a request gives none.
    pub budget: Setting<u32>,
    /// Model tokens assumed per budget token (≥ 1; 1.35 by default).
    pub safety_factor: Setting<f64>,
    /// Timeout of providers that set none, in milliseconds.
    pub timeout_ms: Setting<u64>,
    /// `strict_audit = true`: the host repairs nothing and quarantines every
    /// faulty answer whole. Off by default: a content digest of other bytes
    /// (D1) and a one-line range written `L<n>` (F5) are repaired, recorded,
    /// and the frames kept (see `docs/requirements.md`, host repair policy).
    pub strict_audit: Setting<bool>,
    /// The consent store file; `None` means the host's default location
    /// (`$CGP_DATA_DIR/consent.ndjson`, else the XDG data dir).
    pub consent_store: Option<Setting<PathBuf>>,
    /// The providers, ordered by name.
    pub providers: Vec<ProviderConfig>,
    /// The files that were read, lowest precedence first.
    pub files: Vec<PathBuf>,
    /// What loading set aside (an untrusted workspace file's providers,
    /// files another user owns); a front end shows each once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::ConfigWarning>,
}

impl Default for Config {
    /// No file at all: the built-in workspace provider on the workspace
    /// directory and the built-in history provider on its git history (started
    /// only in a git working tree), no network.
    fn default() -> Self {
        Config {
            budget: Setting::default_value(DEFAULT_BUDGET),
            safety_factor: Setting::default_value(DEFAULT_SAFETY_FACTOR),
            timeout_ms: Setting::default_value(DEFAULT_TIMEOUT_MS),
            strict_audit: Setting::default_value(false),
            consent_store: None,
            providers: vec![
                ProviderConfig::builtin_history(),
                ProviderConfig::builtin_workspace(),
            ],
            files: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl Config {
    /// The provider configured under `name`.
    pub fn provider(&self, name: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// The providers that are enabled, in name order.
    pub fn enabled_providers(&self) -> impl Iterator<Item = &ProviderConfig> {
        self.providers.iter().filter(|p| p.enabled)
    }

    /// The timeout of `provider` in milliseconds (its own, else the default).
    pub fn timeout_ms_of(&self, provider: &ProviderConfig) -> u64 {
        provider.timeout_ms.unwrap_or(self.timeout_ms.value)
    }
}

/// One configured provider.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderConfig {
    /// The name under `[providers.<name>]`: the provider's key. Its frames,
    /// consent and reports go under this name (the name the provider
    /// announces is shown beside it), so two providers announcing the same
    /// name can be configured side by side; `cgp consent grant <name>` takes it.
    pub name: String,
    /// How it is run or reached.
    #[serde(flatten)]
    pub kind: ProviderKind,
    /// Its own timeout in milliseconds, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Its weight in the budget split (1 by default).
    pub weight: u32,
    /// Whether it is used at all.
    pub enabled: bool,
    /// Where it was configured.
    pub origin: Origin,
}

impl ProviderConfig {
    /// The implicit `workspace` provider: the built-in workspace provider on
    /// the workspace directory.
    pub fn builtin_workspace() -> Self {
        ProviderConfig {
            name: "workspace".to_owned(),
            kind: ProviderKind::Workspace { dir: None },
            timeout_ms: None,
            weight: 1,
            enabled: true,
            origin: Origin::Default,
        }
    }
}

impl ProviderConfig {
    /// The implicit `history` provider: the built-in history provider on the
    /// git repository holding the workspace. The engine starts it only when
    /// there is one; `[providers.history]` with `enabled = false` turns it off.
    pub fn builtin_history() -> Self {
        ProviderConfig {
            name: "history".to_owned(),
            kind: ProviderKind::History { dir: None },
            timeout_ms: None,
            weight: 1,
            enabled: true,
            origin: Origin::Default,
        }
    }
}

/// How a provider is run or reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProviderKind {
    /// The built-in workspace provider (code as symbol, doc and snippet
    /// frames), in-process.
    Workspace {
        /// The directory; `None` means the workspace the command runs on.
        #[serde(skip_serializing_if = "Option::is_none")]
        dir: Option<PathBuf>,
    },
    /// The built-in history provider (a git working tree's commits as
    /// episode frames), in-process.
    History {
        /// A directory in the repository; `None` means the workspace the
        /// command runs on.
        #[serde(skip_serializing_if = "Option::is_none")]
        dir: Option<PathBuf>,
    },
    /// The built-in docs provider (a folder's Markdown), in-process.
    Docs {
        /// The folder.
        dir: PathBuf,
    },
    /// A child process speaking CGP on stdin/stdout.
    Stdio {
        /// The program (a bare name is looked up on `PATH`).
        command: PathBuf,
        /// Its arguments.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        /// Variables set in its environment (which is otherwise scrubbed).
        #[serde(skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        /// Variables passed through from the host's environment.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pass_env: Vec<String>,
        /// Its working directory: `cwd` from the file, else the directory of
        /// the file that configures it (so relative paths in `args` are
        /// relative to that file). `None` only for a provider built in code
        /// (the process's directory).
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
    },
    /// An HTTP endpoint.
    Http {
        /// The URL envelopes are POSTed to.
        url: String,
        /// Where the bearer token is read from, if one is sent.
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        token: Option<TokenSource>,
    },
}

impl ProviderKind {
    /// The `type` as written in `cgp.toml`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ProviderKind::Workspace { .. } => "workspace",
            ProviderKind::History { .. } => "history",
            ProviderKind::Docs { .. } => "docs",
            ProviderKind::Stdio { .. } => "stdio",
            ProviderKind::Http { .. } => "http",
        }
    }
}

/// Where an HTTP provider's bearer token is read from. Never the token itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// `token_env = "VAR"`: the environment variable `VAR`.
    #[serde(rename = "token_env")]
    Env(String),
    /// `token_file = "path"`: the first line of a file.
    #[serde(rename = "token_file")]
    File(PathBuf),
}
