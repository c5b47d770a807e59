//! Workspace trust: which workspace `cgp.toml` files may make `cgp` run a
//! program or send data off this machine.
//!
//! A cloned repository is somebody else's text. Its `cgp.toml` could name
//! a stdio provider (a program `cgp` would run as you, at start-up), an
//! HTTP provider (an address your goals would be sent to), or forward
//! your environment variables (`pass_env`). In the spirit of
//! `direnv allow` and editors' workspace trust, such settings are honoured
//! only from your own configuration (the per-user file, `CGP_CONFIG`,
//! `--config`) or from a workspace file you trusted with `cgp trust`.
//!
//! Trust is recorded here, in the user's data directory (never in the
//! workspace): the file's *location* and a fingerprint of what it runs. A
//! changed file is a different file and needs trusting again. The store is
//! small JSON lines, rewritten whole through a temp file and a rename so a
//! crash never leaves half a record; an unreadable store trusts nothing.
//! Every read-modify-write (trust, revoke) holds an exclusive lock on a
//! sibling lock file, so concurrent `cgp trust` and `cgp trust --revoke`
//! never lose a record nor report a success that a racing writer undid
//! (N13).
//!
//! **Location, not target (N2).** A workspace file's relative `command`,
//! `cwd` and `dir` resolve from the directory it is *reached in*, so trust
//! is keyed by that directory (canonicalized) plus the file name, not by
//! where a symlinked `cgp.toml` points: `evil/cgp.toml -> ../good/cgp.toml`
//! is a different location from `good/cgp.toml`, and trusting the latter
//! does not make `evil/`'s `./scripts/provider.sh` run. A `cgp.toml` that
//! is not a symlink has the same location as its canonical path.
//!
//! **Programs in the repository are pinned (N12).** The fingerprint is the
//! SHA-256 of the file's bytes when it names no repository-local program;
//! otherwise it also covers, by path and SHA-256, every stdio provider's
//! `command` given as a path and every argument naming an existing file,
//! when that file lies under the `cgp.toml`'s directory
//! ([`pinned_programs`]). A changed `./tool.sh` needs `cgp trust` again.
//! Not covered: programs found on `PATH` or outside the repository, and
//! what a pinned program itself reads or imports.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::model::{ProviderConfig, ProviderKind};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::env::Environment;

/// Environment variable naming the data directory (shared with the consent store).
pub const DATA_DIR_ENV: &str = "CGP_DATA_DIR";

/// The trust store's file name in the data directory.
pub const TRUST_FILE_NAME: &str = "trusted-configs.ndjson";

/// Largest trust store read: far more entries than anyone trusts.
const MAX_STORE_BYTES: u64 = 4 * 1024 * 1024;

/// The trust store's lock file name in the data directory.
pub const TRUST_LOCK_NAME: &str = "trusted-configs.lock";

/// One trusted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustEntry {
    /// The file's location ([`trust_location`]).
    pub path: PathBuf,
    /// Its fingerprint when it was trusted ([`fingerprint`]): lower-case
    /// hex SHA-256.
    pub sha256: String,
    /// When (RFC 3339, UTC).
    pub trusted_at: String,
}

/// Whether a workspace file is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// Trusted with exactly these bytes.
    Trusted,
    /// Never trusted (or trust was revoked).
    Untrusted,
    /// Trusted once, but the file has changed since.
    Changed {
        /// When the earlier version was trusted.
        trusted_at: String,
    },
    /// The store could not be read, so nothing is trusted.
    StoreUnreadable {
        /// Why.
        reason: String,
    },
}

/// Why the trust store could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// No data directory: neither `CGP_DATA_DIR`, `XDG_DATA_HOME` nor `HOME` is set.
    #[error("no data directory to keep trusted files in; set {DATA_DIR_ENV} or HOME")]
    NoDataDir,
    /// Reading or writing failed.
    #[error("{}: {source}; check the path and its permissions", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the store is not a record.
    #[error("{}:{line}: not a trust record ({reason}); fix or delete that line (nothing in the store is trusted until then)", path.display())]
    Corrupt {
        /// The store.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The store is not a regular file, or is too large.
    #[error("{}: {reason}", path.display())]
    Unusable {
        /// The store.
        path: PathBuf,
        /// What is wrong and what to do.
        reason: String,
    },
}

/// The trust store: a file in the user's data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store at `path`.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    /// The store in the data directory `env` names.
    pub fn for_env(env: &Environment) -> Result<Self, TrustError> {
        env.data_dir
            .as_ref()
            .map(|d| Self::at(d.join(TRUST_FILE_NAME)))
            .ok_or(TrustError::NoDataDir)
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry. A missing store is an empty one; anything unreadable
    /// is an error (a store that cannot be read trusts nothing).
    pub fn entries(&self) -> Result<Vec<TrustEntry>, TrustError> {
        let io = |source| TrustError::Io {
            path: self.path.clone(),
            source,
        };
        let meta = match std::fs::metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(e)),
        };
        if !meta.is_file() {
            return Err(TrustError::Unusable {
                path: self.path.clone(),
                reason: "is not a regular file; remove it or set CGP_DATA_DIR elsewhere".into(),
            });
        }
        let mut bytes = Vec::new();
        std::fs::File::open(&self.path)
            .and_then(|f| f.take(MAX_STORE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(io)?;
        if bytes.len() as u64 > MAX_STORE_BYTES {
            return Err(TrustError::Unusable {
                path: self.path.clone(),
                reason: format!(
                    "is over {MAX_STORE_BYTES} bytes; it is not a trust store cgp wrote"
                ),
            });
        }
        let mut out = Vec::new();
        for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let entry: TrustEntry =
                serde_json::from_slice(line).map_err(|e| TrustError::Corrupt {
                    path: self.path.clone(),
                    line: i + 1,
                    reason: e.to_string(),
                })?;
            out.push(entry);
        }
        Ok(out)
    }

    /// Whether the file at `location` ([`trust_location`]) with this
    /// `fingerprint` ([`fingerprint`]) is trusted.
    pub fn state_of(&self, location: &Path, fingerprint: &str) -> TrustState {
        let path = location;
        let entries = match self.entries() {
            Ok(e) => e,
            Err(e) => {
                return TrustState::StoreUnreadable {
                    reason: e.to_string(),
                }
            }
        };
        let mine: Vec<&TrustEntry> = entries.iter().filter(|e| e.path == path).collect();
        if mine.iter().any(|e| e.sha256 == fingerprint) {
            TrustState::Trusted
        } else if let Some(e) = mine.last() {
            TrustState::Changed {
                trusted_at: e.trusted_at.clone(),
            }
        } else {
            TrustState::Untrusted
        }
    }

    /// Trust the file at `location` with this `fingerprint`, replacing
    /// any earlier trust of that location.
    pub fn trust(&self, location: &Path, fingerprint: &str) -> Result<TrustEntry, TrustError> {
        let path = location;
        let _lock = self.lock()?;
        let mut entries = self.entries()?;
        entries.retain(|e| e.path != path);
        let entry = TrustEntry {
            path: path.to_path_buf(),
            sha256: fingerprint.to_owned(),
            trusted_at: contextgraph_types::Timestamp::now().to_wire(),
        };
        entries.push(entry.clone());
        self.write(&entries)?;
        Ok(entry)
    }

    /// Forget `path`. Returns whether it was trusted.
    pub fn revoke(&self, path: &Path) -> Result<bool, TrustError> {
        let _lock = self.lock()?;
        let mut entries = self.entries()?;
        let before = entries.len();
        entries.retain(|e| e.path != path);
        if entries.len() == before {
            return Ok(false);
        }
        self.write(&entries)?;
        Ok(true)
    }

    /// Hold the store's lock file exclusively until the guard drops: the
    /// read-modify-write of [`trust`](Self::trust) and
    /// [`revoke`](Self::revoke) is one step for every other `cgp` (N13).
    fn lock(&self) -> Result<std::fs::File, TrustError> {
        let lock_path = self.path.with_file_name(TRUST_LOCK_NAME);
        let io = |source| TrustError::Io {
            path: lock_path.clone(),
            source,
        };
        if let Some(dir) = lock_path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir).map_err(io)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&lock_path).map_err(io)?;
        file.lock().map_err(io)?;
        Ok(file)
    }

    /// Replace the store with `entries`: a new file only the user can
    /// read, renamed over the old one.
    fn write(&self, entries: &[TrustEntry]) -> Result<(), TrustError> {
        let io = |source| TrustError::Io {
            path: self.path.clone(),
            source,
        };
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        create_private_dir(dir).map_err(io)?;
        let mut text = String::new();
        for e in entries {
            let line = serde_json::to_string(e).map_err(|e| io(std::io::Error::other(e)))?;
            text.push_str(&line);
            text.push('\n');
        }
        let tmp = dir.join(format!(
            ".{TRUST_FILE_NAME}.{}.{}.tmp",
            std::process::id(),
            sha256_hex(format!("{:?}", std::time::SystemTime::now()).as_bytes())
                .get(..12)
                .unwrap_or("0")
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&tmp).and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        });
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, &self.path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        Ok(())
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Where trust of the workspace file `path` is recorded: its directory,
/// canonicalized, plus its own file name (not following a symlinked
/// `cgp.toml`, whose relative paths resolve from the link's directory, N2).
pub fn trust_location(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or(path.as_os_str());
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match std::fs::canonicalize(dir) {
        Ok(dir) => dir.join(name),
        Err(_) => path.to_path_buf(),
    }
}

/// The repository-local programs the providers of the file at `location`
/// name (N12): each stdio `command` given as a path, and each argument
/// naming an existing file (relative to the provider's `cwd`, else the
/// file's directory), when it lies under the file's directory. Sorted,
/// canonical, each once.
pub fn pinned_programs(location: &Path, providers: &[ProviderConfig]) -> Vec<PathBuf> {
    let base = location.parent().unwrap_or(Path::new("."));
    let Ok(base) = std::fs::canonicalize(base) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in providers {
        let ProviderKind::Stdio {
            command, args, cwd, ..
        } = &p.kind
        else {
            continue;
        };
        let run_dir = cwd.clone().unwrap_or_else(|| base.clone());
        let mut candidates = Vec::new();
        if command.components().count() > 1 || command.is_absolute() {
            candidates.push(base.join(command));
        }
        candidates.extend(args.iter().map(|a| run_dir.join(a)));
        for c in candidates {
            if let Ok(real) = std::fs::canonicalize(&c) {
                if real.is_file() && real.starts_with(&base) && !out.contains(&real) {
                    out.push(real);
                }
            }
        }
    }
    out.sort();
    out
}

/// The fingerprint trust records for a file with these `bytes` naming
/// these `programs` ([`pinned_programs`]): the SHA-256 of the bytes alone
/// when it names none, else a SHA-256 over the bytes' digest and each
/// program's path and digest. An unreadable program counts as changed.
pub fn fingerprint(bytes: &[u8], programs: &[PathBuf]) -> String {
    let config = sha256_hex(bytes);
    if programs.is_empty() {
        return config;
    }
    let mut text = format!("cgp-trust-v2\0{config}\0");
    for p in programs {
        let digest = match std::fs::read(p) {
            Ok(b) => sha256_hex(&b),
            Err(e) => format!("unreadable:{}", e.kind()),
        };
        text.push_str(&format!("{}\0{digest}\0", p.display()));
    }
    sha256_hex(text.as_bytes())
}

/// The uid of the user other than this one (or root) who owns `file` or
/// its directory; discovery never reads such a file, so trusting it
/// would be pointless.
pub fn foreign_owner(file: &Path) -> Option<u32> {
    crate::owner::foreign_owner(file)
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The command that trusts `path`, quoted for a POSIX shell.
pub fn trust_command(path: &Path) -> String {
    let word = path.display().to_string();
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        format!("cgp trust {word}")
    } else {
        format!("cgp trust '{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trusted_file_stays_trusted_until_it_changes_or_is_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::at(dir.path().join("d/trust.ndjson"));
        let file = Path::new("/repo/cgp.toml");
        assert_eq!(store.state_of(file, "a"), TrustState::Untrusted);
        store.trust(file, "a").unwrap();
        assert_eq!(store.state_of(file, "a"), TrustState::Trusted);
        assert!(matches!(
            store.state_of(file, "b"),
            TrustState::Changed { .. }
        ));
        assert_eq!(
            store.state_of(Path::new("/other/cgp.toml"), "a"),
            TrustState::Untrusted
        );
        assert!(store.revoke(file).unwrap());
        assert!(!store.revoke(file).unwrap());
        assert_eq!(store.state_of(file, "a"), TrustState::Untrusted);
    }

    #[test]
    fn an_unreadable_store_trusts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trust.ndjson");
        let store = TrustStore::at(&path);
        store.trust(Path::new("/repo/cgp.toml"), "a").unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{not json\n");
        std::fs::write(&path, text).unwrap();
        assert!(matches!(
            store.state_of(Path::new("/repo/cgp.toml"), "a"),
            TrustState::StoreUnreadable { .. }
        ));
        let err = store.trust(Path::new("/x"), "a").unwrap_err();
        assert!(err.to_string().contains(":2:"), "{err}");
    }

    #[test]
    fn trust_commands_are_quoted_for_a_shell() {
        assert_eq!(
            trust_command(Path::new("/a/cgp.toml")),
            "cgp trust /a/cgp.toml"
        );
        assert_eq!(
            trust_command(Path::new("/my repo/cgp.toml")),
            "cgp trust '/my repo/cgp.toml'"
        );
    }
}
