//! `cgp trust`: let a workspace `cgp.toml` run its providers.
//!
//! A workspace file arrives with a clone; until the user trusts it, its
//! stdio and HTTP providers are skipped (see `contextgraph_config::trust`).
//! Trusting records the file's location (its directory, canonicalized, and
//! its name: a symlinked `cgp.toml` is trusted where it is reached, since
//! its relative paths resolve from there) and a fingerprint of its bytes
//! and of the repository-local programs it runs, in the user's data
//! directory; any change to either withdraws it.
//! Before recording, the command shows what the file would run and where
//! it would send data, so the user trusts what they have seen.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use contextgraph_config::trust::{
    fingerprint, foreign_owner, pinned_programs, trust_location, TrustEntry,
};
use contextgraph_config::{
    discover_workspace_file, read_file, Config, Environment, ProviderKind, TrustStore, FILE_NAME,
};

use super::CommandError;
use crate::output;
use crate::terminal::{for_terminal, path_for_terminal};

/// Arguments of `cgp trust`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  cgp trust                        # trust the cgp.toml this workspace uses (after reading it)
  cgp trust ../other-repo          # a directory means its cgp.toml
  cgp trust --list                 # every trusted file, and whether it changed since
  cgp trust --revoke ./cgp.toml

Why: a workspace cgp.toml comes with the repository. Until you trust it, cgp skips its stdio
providers (programs cgp would run as you) and http providers (addresses your goals would be
sent to), and says so once per command. Budgets, timeouts, weights and the built-in providers
on folders inside the repository apply without trust. consent_store is only ever read from
your own configuration. Your own files ($CGP_CONFIG, ~/.config/cgp/cgp.toml, --config PATH)
need no trust.

Trust is recorded as the file's location and a SHA-256 over its bytes and the programs inside the
repository it runs (a stdio command given as a path, arguments naming a file), in $CGP_DATA_DIR
(else ~/.local/share/contextgraph)/trusted-configs.ndjson. Any change to the file or to those
programs needs trusting again. Programs found on PATH or outside the repository are not pinned.
A cgp.toml that is a symlink is trusted where it is reached, not where it points: its relative
paths resolve from the link's directory.

Exit codes:
  0  done
  1  the file cannot be trusted (missing, unreadable, invalid, owned by another user) or was not trusted
  2  usage error")]
pub struct TrustArgs {
    /// The cgp.toml to trust, or a directory holding one (default: the one found from --dir).
    #[arg(value_name = "PATH", conflicts_with_all = ["list", "revoke"])]
    pub path: Option<PathBuf>,
    /// Where to look for the workspace cgp.toml when no PATH is given.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// List the trusted files and whether each is unchanged.
    #[arg(long, conflicts_with = "revoke")]
    pub list: bool,
    /// Stop trusting this cgp.toml (or the one in this directory).
    #[arg(long, value_name = "PATH")]
    pub revoke: Option<PathBuf>,
}

/// Run `cgp trust`.
pub fn run(args: TrustArgs) -> Result<(), CommandError> {
    let env = Environment::from_process();
    let store = TrustStore::for_env(&env)?;
    if args.list {
        return list(&store, &env);
    }
    if let Some(path) = &args.revoke {
        let path = trust_location(&absolute(&file_of(path))?);
        if !store.revoke(&path)? {
            return Err(format!(
                "{} is not trusted, so there is nothing to revoke; `cgp trust --list` shows what is",
                path_for_terminal(&path)
            )
            .into());
        }
        return say(&format!(
            "no longer trusted: {}\n",
            path_for_terminal(&path)
        ));
    }
    let file = match &args.path {
        Some(p) => file_of(p),
        None => {
            let found = discover_workspace_file(&args.dir, env.home.as_deref());
            match (found.file, found.ignored.first()) {
                (Some(file), _) => file,
                // N17: the file exists, but discovery passes it over.
                (None, Some(skipped)) => {
                    return Err(format!(
                        "{}: {}",
                        path_for_terminal(&skipped.path),
                        for_terminal(&skipped.message)
                    )
                    .into())
                }
                (None, None) => {
                    return Err(format!(
                        "no cgp.toml found walking up from {} to the repository root; give its path: cgp trust PATH",
                        path_for_terminal(&args.dir)
                    )
                    .into())
                }
            }
        }
    };
    trust(&store, &file, &env)
}

/// `PATH` itself, or `PATH/cgp.toml` when it is a directory.
fn file_of(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(FILE_NAME)
    } else {
        path.to_path_buf()
    }
}

fn absolute(path: &Path) -> Result<PathBuf, CommandError> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()
        .map_err(|e| format!("{}: {e}", path_for_terminal(path)))?
        .join(path))
}

fn trust(store: &TrustStore, file: &Path, env: &Environment) -> Result<(), CommandError> {
    let canonical = std::fs::canonicalize(file).map_err(|e| {
        format!(
            "{}: {e}; give the path of a cgp.toml",
            path_for_terminal(file)
        )
    })?;
    if !canonical.is_file() {
        return Err(format!(
            "{} is not a regular file; give the path of a cgp.toml",
            path_for_terminal(&canonical)
        )
        .into());
    }
    if let Some(uid) = foreign_owner(&canonical) {
        return Err(format!(
            "{} (or its directory) belongs to another user (uid {uid}); cgp never reads such a file, \
             so it cannot be trusted: copy it into a directory of yours",
            path_for_terminal(&canonical)
        )
        .into());
    }
    let text = read_file(&canonical)?;
    let location = trust_location(&absolute(file)?);
    // Shown before it is recorded: what the user is about to allow, with
    // relative paths resolved from where the file is reached (N2).
    let config = Config::from_toml_str(&text, &location, env)?;
    let programs = pinned_programs(&location, &config.providers);
    let entry = store.trust(&location, &fingerprint(text.as_bytes(), &programs))?;
    let mut out = format!(
        "trusted: {} (sha256 {})\n",
        path_for_terminal(&entry.path),
        entry.sha256.get(..16).unwrap_or(&entry.sha256)
    );
    if location != canonical {
        out.push_str(&format!(
            "  (a link to {}; trusted here only)\n",
            path_for_terminal(&canonical)
        ));
    }
    for p in &programs {
        out.push_str(&format!(
            "  pinned: {} (a change needs `cgp trust` again)\n",
            path_for_terminal(p)
        ));
    }
    let mut any = false;
    for p in &config.providers {
        let line = match &p.kind {
            ProviderKind::Stdio {
                command,
                args,
                pass_env,
                ..
            } => {
                let mut words = vec![command.to_string_lossy().into_owned()];
                words.extend(args.iter().cloned());
                let mut line = format!("  {}: runs {}", p.name, for_terminal(&words.join(" ")));
                if !pass_env.is_empty() {
                    line.push_str(&format!(
                        " (passing it {})",
                        for_terminal(&pass_env.join(", "))
                    ));
                }
                line
            }
            ProviderKind::Http { url, .. } => {
                format!("  {}: sends goals to {}", p.name, for_terminal(url))
            }
            _ => continue,
        };
        any = true;
        out.push_str(&line);
        out.push('\n');
    }
    if !any {
        out.push_str("  (it configures no program and no network provider)\n");
    }
    out.push_str("Any change to the file needs `cgp trust` again.\n");
    say(&out)
}

fn list(store: &TrustStore, env: &Environment) -> Result<(), CommandError> {
    let entries = store.entries()?;
    if entries.is_empty() {
        return say(&format!(
            "no workspace cgp.toml is trusted (store: {})\n",
            path_for_terminal(store.path())
        ));
    }
    let mut out = String::new();
    for e in &entries {
        out.push_str(&format!(
            "{}  {}  trusted {}\n",
            state(e, env),
            path_for_terminal(&e.path),
            for_terminal(&e.trusted_at)
        ));
    }
    say(&out)
}

/// Whether the file is still the one trusted (its bytes and the programs
/// it pins).
fn state(entry: &TrustEntry, env: &Environment) -> &'static str {
    match read_file(&entry.path) {
        Ok(text) => {
            let programs = Config::from_toml_str(&text, &entry.path, env)
                .map(|c| pinned_programs(&entry.path, &c.providers))
                .unwrap_or_default();
            if fingerprint(text.as_bytes(), &programs) == entry.sha256 {
                "trusted"
            } else {
                "changed"
            }
        }
        Err(_) if !entry.path.exists() => "missing",
        Err(_) => "unreadable",
    }
}

fn say(text: &str) -> Result<(), CommandError> {
    let mut stdout = std::io::stdout().lock();
    output::finish_stdout(
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush()),
    )
}
