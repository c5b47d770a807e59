//! The benchmark repositories: the public ones in `../shared/bench/history/`
//! (git bundles, cloned once into `target/history-bench/` with the `git`
//! binary: libgit2 cannot read a bundle) and this repository itself. Set
//! `CGP_HISTORY_DATA` to a directory holding clones named `fd`, `got`,
//! `uvicorn`, `viper` to skip the cloning.

use std::path::{Path, PathBuf};

/// The bundles, by name, with the split of the localization benchmark.
pub const BUNDLES: &[(&str, Split)] = &[
    ("fd", Split::Tuning),
    ("got", Split::Tuning),
    ("uvicorn", Split::HeldOut),
    ("viper", Split::HeldOut),
];

/// Which half a repository belongs to (tuning never looks at held-out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Looked at while tuning.
    Tuning,
    /// Reported only.
    HeldOut,
}

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// A working clone of bundle `name`, or why there is none.
pub fn clone_of(name: &str) -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("CGP_HISTORY_DATA") {
        let p = PathBuf::from(dir).join(name);
        return if p.join(".git").exists() {
            Ok(p)
        } else {
            Err(format!("{} is not a clone", p.display()))
        };
    }
    let root = repo_root();
    let bundle = root
        .join("../shared/bench/history")
        .join(format!("{name}.bundle"));
    if !bundle.is_file() {
        return Err(format!("{} not found", bundle.display()));
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let dir = target.join("history-bench").join(name);
    if dir.join(".git").exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(dir.parent().expect("parent")).map_err(|e| e.to_string())?;
    let status = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(&bundle)
        .arg(&dir)
        .status()
        .map_err(|e| format!("cloning {name} needs the git binary: {e}"))?;
    if status.success() {
        Ok(dir)
    } else {
        Err(format!("git clone {} failed", bundle.display()))
    }
}
