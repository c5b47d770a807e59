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
use crate::FILE_NAME;

/// The workspace's `cgp.toml`: the first one found walking up from `start`,
/// stopping at the repository root (a directory holding `.git`) or the
/// file-system root.
pub fn find_workspace_file(start: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    for dir in start.ancestors() {
        let candidate = dir.join(FILE_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
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
    let mut files = Vec::new();
    if let Some((path, named)) = env.user_config_path() {
        if path.is_file() {
            files.push(path);
        } else if named {
            return Err(ConfigError::Missing {
                path,
                asked_by: crate::env::CONFIG_ENV,
            });
        }
    }
    if let Some(ws) = find_workspace_file(workspace) {
        // The same file reached both ways counts once.
        if !files.iter().any(|f| same_file(f, &ws)) {
            files.push(ws);
        }
    }
    Ok(files)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Read one file, bounded.
pub(crate) fn read_file(path: &Path) -> Result<String, ConfigError> {
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
    pub fn load_with(
        workspace: &Path,
        explicit: Option<&Path>,
        env: &Environment,
    ) -> Result<Config, ConfigError> {
        let files = config_files(workspace, explicit, env)?;
        Self::from_files(&files, env)
    }

    /// Merge `files`, lowest precedence first, over the built-in defaults.
    pub fn from_files(files: &[PathBuf], env: &Environment) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        config.providers.clear();
        for path in files {
            let text = read_file(path)?;
            let parsed = parse_file(&text, path, env)?;
            config.apply(parsed, path);
            config.files.push(path.clone());
        }
        // The built-in workspace provider is always there unless a file
        // says something about a provider named `workspace`.
        if config.provider("workspace").is_none() {
            config.providers.push(ProviderConfig::builtin_workspace());
        }
        config.providers.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(config)
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
        if config.provider("workspace").is_none() {
            config.providers.push(ProviderConfig::builtin_workspace());
        }
        config.providers.sort_by(|a, b| a.name.cmp(&b.name));
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
