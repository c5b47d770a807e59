//! The durable consent store: an append-only NDJSON file.
//!
//! One JSON record per line — egress grants, scope receipts and revocations,
//! each a record of its own, so the file is the audit trail (nothing is ever
//! rewritten or deleted, a revocation is itself recorded). Every append is
//! `fsync`ed before it returns, so a grant the user saw recorded survives a
//! crash, and is made under an exclusive `flock` so two processes can append
//! at once without interleaving. A crash mid-append can leave a torn last
//! line: readers skip it with a warning and the next append starts a fresh
//! line, so nothing else is lost.
//!
//! # Location
//!
//! [`ConsentStore::default_path`]: `$CGP_DATA_DIR/consent.ndjson` when
//! `CGP_DATA_DIR` is set, else `$XDG_DATA_HOME/contextgraph/consent.ndjson`,
//! else `~/.local/share/contextgraph/consent.ndjson` (on macOS
//! `~/Library/Application Support/contextgraph/consent.ndjson`). An explicit
//! path given to [`ConsentStore::open`] overrides all of these.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use contextgraph_types::{ConsentReceipt, EgressScope, Grantor, Timestamp};
use serde::{Deserialize, Serialize};

/// File name of the store inside its data directory.
pub const CONSENT_FILE_NAME: &str = "consent.ndjson";

/// Environment variable overriding the data directory.
pub const DATA_DIR_ENV: &str = "CGP_DATA_DIR";

/// Largest store file read (64 MiB): the store is written by this host, but
/// a file is something anyone with access can grow.
const MAX_STORE_BYTES: u64 = 64 * 1024 * 1024;

/// A revocation: withdraws every earlier grant (scope `None`) or earlier
/// receipt for one scope of a provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revocation {
    /// The provider.
    pub provider_id: String,
    /// The scope revoked; absent revokes the egress grant and every receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<EgressScope>,
    /// Who revoked.
    pub grantor: Grantor,
    /// When (F4).
    pub revoked_at: String,
}

/// One line of the store: a consent record (an egress grant or a scope
/// receipt, [`ConsentReceipt`]) or a revocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StoredLine", into = "StoredLine")]
pub enum ConsentRecord {
    /// An egress grant (no scope) or a scope receipt (C6).
    Receipt(ConsentReceipt),
    /// A revocation.
    Revocation(Revocation),
}

impl ConsentRecord {
    /// The provider the record concerns.
    pub fn provider_id(&self) -> &str {
        match self {
            ConsentRecord::Receipt(r) => &r.provider_id,
            ConsentRecord::Revocation(v) => &v.provider_id,
        }
    }
}

/// The file's form of a line: the `record` tag says what it is, so a line
/// written by an older host (`grant` without `scope`, `scope_receipt` with
/// one) reads the same, and a line whose tag and scope disagree is refused
/// (and so, like any unreadable line, fails closed).
#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum StoredLine {
    Grant(ConsentReceipt),
    ScopeReceipt(ConsentReceipt),
    Revocation(Revocation),
}

impl TryFrom<StoredLine> for ConsentRecord {
    type Error = &'static str;

    fn try_from(line: StoredLine) -> Result<Self, Self::Error> {
        match line {
            StoredLine::Grant(r) if r.scope.is_some() => {
                Err("a `grant` record carries a scope; only a `scope_receipt` may")
            }
            StoredLine::ScopeReceipt(r) if r.scope.is_none() => {
                Err("a `scope_receipt` record names no scope")
            }
            StoredLine::Grant(r) | StoredLine::ScopeReceipt(r) => Ok(ConsentRecord::Receipt(r)),
            StoredLine::Revocation(v) => Ok(ConsentRecord::Revocation(v)),
        }
    }
}

impl From<ConsentRecord> for StoredLine {
    fn from(record: ConsentRecord) -> Self {
        match record {
            ConsentRecord::Receipt(r) if r.is_egress_grant() => StoredLine::Grant(r),
            ConsentRecord::Receipt(r) => StoredLine::ScopeReceipt(r),
            ConsentRecord::Revocation(v) => StoredLine::Revocation(v),
        }
    }
}

/// Why the store could not be used. Names the file and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConsentStoreError {
    /// No data directory could be determined.
    #[error("consent store: no data directory: set {DATA_DIR_ENV} or XDG_DATA_HOME or HOME, or open the store with an explicit path")]
    NoDataDir,
    /// File-system failure.
    #[error("consent store {path}: {action} failed: {source}; check the path and its permissions")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than this host will read.
    #[error("consent store {path}: the file is {bytes} bytes, over the {MAX_STORE_BYTES}-byte limit; archive it and start a new one")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// Recording would make the store larger than any host reads: refused,
    /// since a store that cannot be read grants nothing and a "recorded"
    /// grant would be a lie.
    #[error("consent store {path}: recording this would take the file to {bytes} bytes, over the {MAX_STORE_BYTES}-byte limit, and it could never be read again; nothing was recorded: move the file aside (keep it as the audit trail) and grant again")]
    WouldBeTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size after the append.
        bytes: u64,
    },
    /// The path is a directory, FIFO, device or socket.
    #[error("consent store {path}: not a regular file (a directory, FIFO or device); point consent_store (or CGP_DATA_DIR) at a file, or remove what is there")]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
}

/// A line of the store that could not be read, and which provider it may
/// concern. Consent fails closed: every provider such a line may concern
/// counts as not granted (the line could be a revocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableLine {
    /// 1-based line number.
    pub line: usize,
    /// The `provider_id` recovered from the line; `None` when none could be,
    /// so it may concern any provider.
    pub provider_id: Option<String>,
}

/// Every record in the store at the time it was read, in order, plus a
/// warning per line that could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentLedger {
    /// The records, in file order.
    pub records: Vec<ConsentRecord>,
    /// One sentence per skipped line (a torn last line after a crash, say).
    pub warnings: Vec<String>,
    /// The lines that could not be read.
    pub unreadable: Vec<UnreadableLine>,
}

impl ConsentLedger {
    /// The first unreadable line that may concern `provider_id`: while there
    /// is one, nothing is granted to it.
    pub fn unreadable_line_for(&self, provider_id: &str) -> Option<usize> {
        self.unreadable
            .iter()
            .find(|u| u.provider_id.as_deref().is_none_or(|p| p == provider_id))
            .map(|u| u.line)
    }

    /// The records still in force: each revocation withdraws the matching
    /// records before it (a later grant is a new grant).
    fn in_force(&self) -> Vec<&ConsentRecord> {
        let mut out: Vec<&ConsentRecord> = Vec::new();
        for record in &self.records {
            match record {
                // A revocation without a scope withdraws the grant and every
                // receipt; one with a scope withdraws only that scope's receipts.
                ConsentRecord::Revocation(rev) => out.retain(|r| match r {
                    ConsentRecord::Receipt(rc) => {
                        !(rc.provider_id == rev.provider_id
                            && rev
                                .scope
                                .as_ref()
                                .is_none_or(|s| rc.scope.as_ref() == Some(s)))
                    }
                    ConsentRecord::Revocation(_) => true,
                }),
                other => out.push(other),
            }
        }
        out
    }

    /// A live egress grant for exactly this provider identity and version.
    pub fn live_grant(
        &self,
        provider_id: &str,
        name: &str,
        version: &str,
        now: Timestamp,
    ) -> Option<ConsentReceipt> {
        if self.unreadable_line_for(provider_id).is_some() {
            return None;
        }
        self.in_force().into_iter().find_map(|r| match r {
            ConsentRecord::Receipt(g)
                if g.is_egress_grant()
                    && g.pins(provider_id, name, version)
                    && g.is_live_at(now) =>
            {
                Some(g.clone())
            }
            _ => None,
        })
    }

    /// A live receipt covering `scope` for exactly this identity and version.
    pub fn live_receipt(
        &self,
        provider_id: &str,
        name: &str,
        version: &str,
        scope: &EgressScope,
        now: Timestamp,
    ) -> Option<ConsentReceipt> {
        if self.unreadable_line_for(provider_id).is_some() {
            return None;
        }
        self.in_force().into_iter().find_map(|r| match r {
            ConsentRecord::Receipt(rc)
                if rc.covers(provider_id, name, version, scope) && rc.is_live_at(now) =>
            {
                Some(rc.clone())
            }
            _ => None,
        })
    }

    /// The (name, version) identities of `provider_id` that records in
    /// force pin (for "needs a new grant" messages, N16).
    pub fn pinned_identities(&self, provider_id: &str) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self
            .in_force()
            .into_iter()
            .filter_map(|r| match r {
                ConsentRecord::Receipt(rc) if rc.provider_id == provider_id => {
                    Some((rc.provider_name.clone(), rc.provider_version.clone()))
                }
                _ => None,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The versions the receipts in force for `provider_id` pin.
    pub fn pinned_versions(&self, provider_id: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .in_force()
            .into_iter()
            .filter_map(|r| match r {
                ConsentRecord::Receipt(rc) if rc.provider_id == provider_id => {
                    Some(rc.provider_version.clone())
                }
                _ => None,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

/// The consent store file.
#[derive(Debug, Clone)]
pub struct ConsentStore {
    path: PathBuf,
}

struct Flock<'f>(&'f File);

impl<'f> Flock<'f> {
    fn acquire(file: &'f File, exclusive: bool) -> std::io::Result<Self> {
        let op = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        loop {
            // SAFETY: flock(2) on a descriptor we own for the lifetime of
            // the guard; no memory is passed.
            #[allow(unsafe_code)] // one of the crate's three FFI sites
            let rc = unsafe { libc::flock(file.as_raw_fd(), op) };
            if rc == 0 {
                return Ok(Flock(file));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        // SAFETY: as above; unlocking a descriptor we still own.
        #[allow(unsafe_code)] // one of the crate's three FFI sites
        unsafe {
            libc::flock(self.0.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

impl ConsentStore {
    /// The default store location (see the module documentation).
    pub fn default_path() -> Result<PathBuf, ConsentStoreError> {
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = non_empty(DATA_DIR_ENV) {
            return Ok(PathBuf::from(dir).join(CONSENT_FILE_NAME));
        }
        let base = if cfg!(target_os = "macos") {
            non_empty("HOME").map(|h| PathBuf::from(h).join("Library/Application Support"))
        } else {
            non_empty("XDG_DATA_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| non_empty("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        };
        base.map(|b| b.join("contextgraph").join(CONSENT_FILE_NAME))
            .ok_or(ConsentStoreError::NoDataDir)
    }

    /// Open (creating if needed) the store at the default location.
    pub fn open_default() -> Result<Self, ConsentStoreError> {
        Self::open(Self::default_path()?)
    }

    /// Open (creating it and its directory if needed) the store at `path`.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, ConsentStoreError> {
        let path = path.into();
        check_regular(&path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| ConsentStoreError::Io {
                path: path.clone(),
                action: "creating its directory",
                source,
            })?;
        }
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| ConsentStoreError::Io {
                path: path.clone(),
                action: "creating",
                source,
            })?;
        Ok(ConsentStore { path })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, action: &'static str) -> impl FnOnce(std::io::Error) -> ConsentStoreError + '_ {
        move |source| ConsentStoreError::Io {
            path: self.path.clone(),
            action,
            source,
        }
    }

    /// Append one record durably: under an exclusive lock, starting a fresh
    /// line if a crash left a torn one, then `fsync`.
    pub fn append(&self, record: &ConsentRecord) -> Result<(), ConsentStoreError> {
        let mut line = serde_json::to_vec(record).map_err(|e| ConsentStoreError::Io {
            path: self.path.clone(),
            action: "encoding a record",
            source: std::io::Error::other(e),
        })?;
        line.push(b'\n');
        check_regular(&self.path)?;
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&self.path)
            .map_err(self.io("opening"))?;
        let _lock = Flock::acquire(&file, true).map_err(self.io("locking"))?;
        // I/O goes through `&File` so the lock guard's borrow stays valid.
        let mut f = &file;
        let len = file.metadata().map_err(self.io("reading metadata"))?.len();
        let after = len + line.len() as u64 + 1;
        if after > MAX_STORE_BYTES {
            return Err(ConsentStoreError::WouldBeTooLarge {
                path: self.path.clone(),
                bytes: after,
            });
        }
        if len > 0 {
            let mut last = [0u8; 1];
            f.seek(SeekFrom::Start(len - 1))
                .and_then(|_| f.read_exact(&mut last))
                .map_err(self.io("reading the last byte"))?;
            if last[0] != b'\n' {
                // A torn line from a crash: end it so this record stands alone.
                f.write_all(b"\n").map_err(self.io("appending"))?;
            }
        }
        f.write_all(&line).map_err(self.io("appending"))?;
        file.sync_all().map_err(self.io("syncing"))?;
        Ok(())
    }

    /// Read every record (under a shared lock, so a concurrent append is
    /// either wholly seen or not at all).
    pub fn load(&self) -> Result<ConsentLedger, ConsentStoreError> {
        check_regular(&self.path)?;
        let file = File::open(&self.path).map_err(self.io("opening"))?;
        let _lock = Flock::acquire(&file, false).map_err(self.io("locking"))?;
        let len = file.metadata().map_err(self.io("reading metadata"))?.len();
        if len > MAX_STORE_BYTES {
            return Err(ConsentStoreError::TooLarge {
                path: self.path.clone(),
                bytes: len,
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        (&file)
            .take(MAX_STORE_BYTES)
            .read_to_end(&mut bytes)
            .map_err(self.io("reading"))?;
        let mut ledger = ConsentLedger::default();
        let ends_cleanly = bytes.last().is_none_or(|b| *b == b'\n');
        let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        let count = lines.len();
        for (i, line) in lines.into_iter().enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<ConsentRecord>(line) {
                Ok(record) => ledger.records.push(record),
                Err(e) => {
                    let torn = i + 1 == count && !ends_cleanly;
                    let provider_id = provider_id_of(line);
                    let concerns = match &provider_id {
                        Some(id) => format!("provider {id:?} is not granted anything"),
                        None => "no egress provider is granted anything".to_owned(),
                    };
                    ledger.warnings.push(if torn {
                        format!(
                            "{}: line {} is torn, probably from a crash during a write; until it is fixed or deleted, {concerns} (it might have been a revocation)",
                            self.path.display(),
                            i + 1
                        )
                    } else {
                        format!(
                            "{}: line {} cannot be read ({e}); until it is fixed or deleted, {concerns} (it might have been a revocation)",
                            self.path.display(),
                            i + 1
                        )
                    });
                    ledger.unreadable.push(UnreadableLine {
                        line: i + 1,
                        provider_id,
                    });
                }
            }
        }
        Ok(ledger)
    }
}

/// An existing path that is not a regular file (following symlinks) is an
/// error; a missing one is not (it is created, or means "no records").
fn check_regular(path: &Path) -> Result<(), ConsentStoreError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(ConsentStoreError::NotAFile {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// The `provider_id` an unreadable line names, if one can be recovered:
/// from the JSON when it parses, else from the text of a torn record.
fn provider_id_of(line: &[u8]) -> Option<String> {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) {
        return v
            .get("provider_id")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
    }
    let text = String::from_utf8_lossy(line);
    let key = "\"provider_id\"";
    let at = text.find(key)? + key.len();
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    let id = &rest[..end];
    (!id.contains('\\')).then(|| id.to_owned())
}
