//! What an untrusted workspace file may set.
//!
//! Everything that cannot run a program, send data off the machine or
//! move where consent lives: budgets, timeouts, weights, switching
//! providers off, and the built-in `workspace` and `docs` providers on
//! folders inside the file's own directory. Not honoured until the file
//! is trusted (`cgp trust`): stdio providers (a program run as the user,
//! with `env` and `pass_env`), HTTP providers (an address goals are sent
//! to, with a token), and built-in providers on folders outside the
//! repository (a cloned repo asking to serve `~/.ssh` to the model).
//! Never honoured from a workspace file at all: `consent_store` (a repo
//! shipping a ready-made grant would otherwise grant itself consent).

use std::path::{Component, Path};

use crate::env::Environment;
use crate::model::{Origin, ProviderKind};
use crate::parse::FileConfig;
use crate::trust::{
    fingerprint, pinned_programs, trust_command, trust_location, TrustState, TrustStore,
};
use crate::warning::ConfigWarning;

/// The trust state of the workspace file at `path` holding `bytes`,
/// parsed as `file`: looked up by its location (not a symlink's target,
/// N2) and its fingerprint, which pins the repository-local programs it
/// names (N12).
pub(crate) fn trust_state(
    path: &Path,
    bytes: &[u8],
    file: &FileConfig,
    env: &Environment,
) -> TrustState {
    let location = trust_location(path);
    let programs = pinned_programs(&location, &file.providers);
    match TrustStore::for_env(env) {
        Ok(store) => store.state_of(&location, &fingerprint(bytes, &programs)),
        Err(_) => TrustState::Untrusted,
    }
}

/// Remove from `file` (the workspace file at `path`) what `state` does
/// not allow, recording one warning per setting removed.
pub(crate) fn restrict(
    file: &mut FileConfig,
    path: &Path,
    state: &TrustState,
    warnings: &mut Vec<ConfigWarning>,
) {
    if let Some((_, line)) = file.consent_store.take() {
        warnings.push(ConfigWarning {
            path: path.to_path_buf(),
            line: Some(line),
            message:
                "consent_store is ignored in a workspace cgp.toml (a repository must not choose \
                      where your consent is recorded); set it in your own ~/.config/cgp/cgp.toml"
                    .to_owned(),
        });
    }
    if *state == TrustState::Trusted {
        return;
    }
    // An untrusted file may make the audit stricter, never laxer than the
    // user's own setting.
    if let Some((false, line)) = file.strict_audit {
        file.strict_audit = None;
        warnings.push(ConfigWarning {
            path: path.to_path_buf(),
            line: Some(line),
            message: format!(
                "strict_audit = false is ignored until you trust this file (it may turn the strict audit on, not off); run: {}",
                trust_command(&trust_location(path))
            ),
        });
    }
    let canonical = trust_location(path);
    let why = match state {
        TrustState::Trusted => return,
        TrustState::Untrusted => "this workspace cgp.toml is not trusted".to_owned(),
        TrustState::Changed { trusted_at } => {
            format!("this workspace cgp.toml, or a program in the repository it runs, changed since you trusted it ({trusted_at})")
        }
        TrustState::StoreUnreadable { reason } => {
            format!("nothing is trusted while the trust store cannot be read ({reason})")
        }
    };
    let base = path.parent().unwrap_or(Path::new("."));
    file.providers.retain(|p| {
        let does = match &p.kind {
            ProviderKind::Stdio { .. } => "it would run a program",
            ProviderKind::Http { .. } => "it would send your goals over the network",
            ProviderKind::Workspace { dir: Some(dir) }
            | ProviderKind::History { dir: Some(dir) }
            | ProviderKind::Docs { dir }
                if !inside(dir, base) =>
            {
                "it would read a folder outside this repository"
            }
            _ => return true,
        };
        let line = match &p.origin {
            Origin::File { line, .. } => Some(*line),
            Origin::Default => None,
        };
        warnings.push(ConfigWarning {
            path: path.to_path_buf(),
            line,
            message: format!(
                "provider `{}` ({}) skipped: {does}, and {why}; review the file, then run: {}",
                p.name,
                p.kind.type_name(),
                trust_command(&canonical)
            ),
        });
        false
    });
}

/// Whether `dir` is `base` or below it, following symlinks where the path
/// exists; a path that does not exist must not climb with `..`.
fn inside(dir: &Path, base: &Path) -> bool {
    let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    match std::fs::canonicalize(dir) {
        Ok(dir) => dir.starts_with(&base),
        Err(_) => {
            !dir.components().any(|c| matches!(c, Component::ParentDir))
                && (dir.starts_with(&base) || dir.is_relative())
        }
    }
}
