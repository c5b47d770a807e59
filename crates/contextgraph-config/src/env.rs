//! The environment variables configuration loading depends on, read once
//! so loading can be tested without touching the process environment.

use std::ffi::OsString;
use std::path::PathBuf;

/// Environment variable naming the per-user configuration file.
pub const CONFIG_ENV: &str = "CGP_CONFIG";

/// What loading reads from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME` (used only when absolute, as the XDG spec says).
    pub xdg_config_home: Option<PathBuf>,
    /// `CGP_CONFIG`: the per-user configuration file, overriding the default location.
    pub cgp_config: Option<PathBuf>,
    /// The user's contextgraph data directory, where trusted workspace
    /// files are recorded: `$CGP_DATA_DIR`, else `$XDG_DATA_HOME/contextgraph`,
    /// else `~/.local/share/contextgraph` (the consent store's directory).
    pub data_dir: Option<PathBuf>,
}

impl Environment {
    /// Read the process environment. Empty values count as unset.
    pub fn from_process() -> Self {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// Read variables through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Self {
        let get = |name: &str| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = get("HOME");
        let data_dir = get(crate::trust::DATA_DIR_ENV).or_else(|| {
            let base = if cfg!(target_os = "macos") {
                home.as_ref().map(|h| h.join("Library/Application Support"))
            } else {
                get("XDG_DATA_HOME")
                    .filter(|p| p.is_absolute())
                    .or_else(|| home.as_ref().map(|h| h.join(".local/share")))
            };
            base.map(|b| b.join("contextgraph"))
        });
        Environment {
            xdg_config_home: get("XDG_CONFIG_HOME").filter(|p| p.is_absolute()),
            cgp_config: get(CONFIG_ENV),
            home,
            data_dir,
        }
    }

    /// The per-user configuration file: `$CGP_CONFIG`, else
    /// `$XDG_CONFIG_HOME/cgp/cgp.toml`, else `~/.config/cgp/cgp.toml`.
    /// The flag says whether it was named explicitly (then it must exist).
    pub fn user_config_path(&self) -> Option<(PathBuf, bool)> {
        if let Some(p) = &self.cgp_config {
            return Some((p.clone(), true));
        }
        let base = self
            .xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))?;
        Some((base.join("cgp").join(crate::FILE_NAME), false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Environment {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Environment::from_lookup(|name| {
            vars.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn cgp_config_overrides_xdg_which_overrides_home() {
        let all = env(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/xdg"),
            ("CGP_CONFIG", "/etc/cgp.toml"),
        ]);
        assert_eq!(
            all.user_config_path(),
            Some((PathBuf::from("/etc/cgp.toml"), true))
        );
        let xdg = env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/xdg")]);
        assert_eq!(
            xdg.user_config_path(),
            Some((PathBuf::from("/xdg/cgp/cgp.toml"), false))
        );
        let home = env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "relative")]);
        assert_eq!(
            home.user_config_path(),
            Some((PathBuf::from("/home/u/.config/cgp/cgp.toml"), false))
        );
        assert_eq!(env(&[("CGP_CONFIG", "")]).user_config_path(), None);
    }
}
