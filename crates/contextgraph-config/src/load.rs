//! Finding the files and merging them.
//!
//! Two files at most: the per-user one (lower precedence) and the
//! workspace one (higher). Top-level keys merge key by key; providers merge
//! by name, a provider defined in the workspace file replacing the user
//! file's definition of the same name whole (a half-merged provider —
//! the user's `command` with the workspace's `args` — would be a provider
//! nobody wrote).

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::env::Environment;
use crate::error::ConfigError;
use crate::model::{Config, Origin, ProviderConfig, Setting};
use crate::parse::{parse_file, FileConfig, MAX_FILE_BYTES};
use crate::warning::ConfigWarning;
use crate::FILE_NAME;

/// The workspace's `cgp.toml`: the first one found walking up from `start`,
/// stopping at the repository root (a directory holding `.git`) or the
/// file-system root. Files another user owns are passed over
/// ([`discover_workspace_file`] says which).
pub fn find_workspace_file(start: &Path) -> Option<PathBuf> {
    discover_workspace_file(start, None).file
}

/// What the walk up from a workspace found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// The workspace file, if any.
    pub file: Option<PathBuf>,
    /// Files passed over because another user owns them or their directory.
    pub ignored: Vec<ConfigWarning>,
}

/// The walk behind [`find_workspace_file`]: up from `start`, stopping at
/// the repository root (a directory holding `.git`), at `home` (a
/// `cgp.toml` above the home directory is not the user's project), or at
/// the file-system root. A `cgp.toml` owned by another user (or in a
/// directory another user owns) is never used: on a shared machine,
/// anyone can leave one in `/tmp` above a checkout.
pub fn discover_workspace_file(start: &Path, home: Option<&Path>) -> Discovery {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    let home = home.map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
    let mut found = Discovery::default();
    for dir in start.ancestors() {
        let candidate = dir.join(FILE_NAME);
        if candidate.is_file() {
            match crate::owner::foreign_owner(&candidate) {
                None => {
                    found.file = Some(candidate);
                    return found;
                }
                Some(uid) => found.ignored.push(ConfigWarning {
                    path: candidate,
                    line: None,
                    message: format!(
                        "not read: it (or its directory) belongs to another user (uid {uid}), \
                         who could make cgp run anything; copy it into your project if you mean to use it"
                    ),
                }),
            }
        }
        if dir.join(".git").exists() || home.as_deref() == Some(dir) {
            break;
        }
    }
    found
}

/// Which files a load reads, lowest precedence first.
pub fn config_files(
    workspace: &Path,
    explicit: Option<&Path>,
    env: &Environment,
) -> Result<Vec<PathBuf>, ConfigError> {
    if let Some(path) = explicit {
        if !path.is_file() {
            return Err(ConfigError::Missing {
                path: path.to_path_buf(),
                asked_by: "--config",
            });
        }
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = user_file(env)?.into_iter().collect();
    if let Some(ws) = discover_workspace_file(workspace, env.home.as_deref()).file {
        // The same file reached both ways counts once.
        if !files.iter().any(|f| same_file(f, &ws)) {
            files.push(ws);
        }
    }
    Ok(files)
}

/// The per-user file, when there is one (`CGP_CONFIG` must exist).
fn user_file(env: &Environment) -> Result<Option<PathBuf>, ConfigError> {
    match env.user_config_path() {
        Some((path, _)) if path.is_file() => Ok(Some(path)),
        Some((path, true)) => Err(ConfigError::Missing {
            path,
            asked_by: crate::env::CONFIG_ENV,
        }),
        _ => Ok(None),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Read one configuration file, bounded, as UTF-8 (what loading reads;
/// `cgp trust` hashes exactly these bytes).
pub fn read_file(path: &Path) -> Result<String, ConfigError> {
    let read = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            bytes: bytes.len() as u64,
            limit: MAX_FILE_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| ConfigError::At {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        key: None,
        message: format!(
            "the file is not UTF-8 (bad byte at offset {}); TOML files are UTF-8",
            e.utf8_error().valid_up_to()
        ),
    })
}

impl Config {
    /// Load the configuration for `workspace` from the process environment:
    /// the per-user file, then the workspace's `cgp.toml`.
    pub fn load(workspace: &Path) -> Result<Config, ConfigError> {
        Self::load_with(workspace, None, &Environment::from_process())
    }

    /// Load with an explicit file (`--config`, which replaces discovery)
    /// and a given environment.
    ///
    /// The per-user file and an explicit file are the user's own and are
    /// honoured whole. The workspace file is somebody else's until trusted
    /// (see [`crate::trust`]): until then its stdio and HTTP providers are
    /// skipped, and built-in providers reading outside its directory too,
    /// each with a [`ConfigWarning`] saying how to trust it. Its
    /// `consent_store` is never honoured, trusted or not.
    pub fn load_with(
        workspace: &Path,
        explicit: Option<&Path>,
        env: &Environment,
    ) -> Result<Config, ConfigError> {
        if explicit.is_some() {
            let files = config_files(workspace, explicit, env)?;
            return Self::from_files(&files, env);
        }
        let user = user_file(env)?;
        let discovery = discover_workspace_file(workspace, env.home.as_deref());
        // The same file reached both ways counts once, as the user's.
        let ws = discovery
            .file
            .filter(|ws| !user.as_ref().is_some_and(|u| same_file(u, ws)));
        let mut config = Config::default();
        config.providers.clear();
        config.warnings = discovery.ignored;
        if let Some(path) = &user {
            let text = read_file(path)?;
            let parsed = parse_file(&text, path, env)?;
            config.apply(parsed, path);
            config.files.push(path.clone());
        }
        if let Some(path) = &ws {
            let text = read_file(path)?;
            let mut parsed = parse_file(&text, path, env)?;
            let state = crate::restrict::trust_state(path, text.as_bytes(), &parsed, env);
            crate::restrict::restrict(&mut parsed, path, &state, &mut config.warnings);
            config.apply(parsed, path);
            config.files.push(path.clone());
        }
        config.finish();
        Ok(config)
    }

    /// Merge `files`, lowest precedence first, over the built-in defaults.
    /// Every file is taken as the user's own (no trust check): this is for
    /// files the caller chose.
    pub fn from_files(files: &[PathBuf], env: &Environment) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        config.providers.clear();
        for path in files {
            let text = read_file(path)?;
            let parsed = parse_file(&text, path, env)?;
            config.apply(parsed, path);
            config.files.push(path.clone());
        }
        config.finish();
        Ok(config)
    }

    /// The built-in workspace and history providers are always there unless
    /// a file says something about a provider of that name; providers by name.
    fn finish(&mut self) {
        if self.provider("workspace").is_none() {
            self.providers.push(ProviderConfig::builtin_workspace());
        }
        if self.provider("history").is_none() {
            self.providers.push(ProviderConfig::builtin_history());
        }
        self.providers.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Parse one file's text as if it were the only file.
    pub fn from_toml_str(
        text: &str,
        path: &Path,
        env: &Environment,
    ) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        config.providers.clear();
        config.apply(parse_file(text, path, env)?, path);
        config.files.push(path.to_path_buf());
        config.finish();
        Ok(config)
    }

    fn apply(&mut self, file: FileConfig, path: &Path) {
        let origin = |line| Origin::File {
            path: path.to_path_buf(),
            line,
        };
        if let Some((v, line)) = file.budget {
            self.budget = Setting {
                value: v,
                origin: origin(line),
            };
        }
        if let Some((v, line)) = file.safety_factor {
            self.safety_factor = Setting {
                value: v,
                origin: origin(line),
            };
        }
        if let Some((v, line)) = file.timeout_ms {
            self.timeout_ms = Setting {
                value: v,
                origin: origin(line),
            };
        }
        if let Some((v, line)) = file.strict_audit {
            self.strict_audit = Setting {
                value: v,
                origin: origin(line),
            };
        }
        if let Some((v, line)) = file.consent_store {
            self.consent_store = Some(Setting {
                value: v,
                origin: origin(line),
            });
        }
        for p in file.providers {
            self.providers.retain(|q| q.name != p.name);
            self.providers.push(p);
        }
    }
}
