//! The session file of `cgp context --session FILE`: what the model of one
//! conversation already holds, kept between runs.
//!
//! The file is untrusted input. It is read with a size cap, parsed and
//! checked by `contextgraph-engine` ([`Session::from_json`]); a file that is
//! not a valid session is reported on stderr and replaced by a fresh session
//! (which is always safe: everything is sent again), never trusted and never
//! a panic. It is written whole (a new file renamed over the old one), so a
//! crash never leaves half a session, and deleting it only means the next
//! turn sends everything again.
//!
//! **Bound to this workspace and this machine (N8).** A well-formed but
//! hostile session could claim deliveries that never happened (evidence
//! withheld as "already in context") or that the preamble was sent. So the
//! file carries an HMAC-SHA256 over the workspace's canonical path and the
//! session bytes, keyed by a random key kept in the user's data directory
//! (`session-key`, created on first use, readable by the user only). A file
//! whose code does not match — forged, edited, copied from another machine
//! or another workspace — is refused with a warning and a fresh session
//! starts. The workspace provider never serves a session file as evidence
//! (`contextgraph_types::secrets::is_cgp_state`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use contextgraph_config::Environment;
use contextgraph_engine::session::MAX_SESSION_BYTES;
use contextgraph_engine::Session;
use contextgraph_types::sha256::sha256;
use serde::{Deserialize, Serialize};

use super::CommandError;
use crate::terminal::for_terminal;

/// The `format` tag of a session file (the session inside has its own).
pub const SESSION_FILE_FORMAT: &str = "cgp-session-file/1";

/// The key file's name in the data directory.
pub const SESSION_KEY_FILE: &str = "session-key";

/// The stored form: the session's JSON as a string (so the authenticated
/// bytes are exactly the bytes read back), the workspace it belongs to and
/// the code that binds them.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredSession {
    format: String,
    workspace: PathBuf,
    mac: String,
    session: String,
}

/// The session in `path` for the workspace `dir`: a fresh one when the file
/// does not exist, or when it is not a valid session of this workspace
/// written by cgp on this machine (said on stderr).
pub fn load(path: &Path, dir: &Path) -> Result<Session, CommandError> {
    let shown = || for_terminal(&path.display().to_string());
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Session::new()),
        Err(e) => {
            return Err(format!(
                "--session {}: cannot read it: {}",
                shown(),
                for_terminal(&e.to_string())
            )
            .into())
        }
    };
    let mut bytes = Vec::new();
    // The session's JSON is escaped inside the file: allow for that.
    let cap = u64::try_from(MAX_SESSION_BYTES).unwrap_or(u64::MAX) * 2 + 4096;
    if let Err(e) = file.take(cap).read_to_end(&mut bytes) {
        return Err(format!(
            "--session {}: cannot read it: {}; pass a session file (or a new path)",
            shown(),
            for_terminal(&e.to_string())
        )
        .into());
    }
    let fresh = |why: &str| {
        eprintln!(
            "warning: --session {}: {}; starting a fresh session (everything is sent again)",
            shown(),
            for_terminal(why)
        );
        Ok(Session::new())
    };
    let stored: StoredSession = match serde_json::from_slice(&bytes) {
        Ok(s) => s,
        Err(e) => {
            return fresh(&format!(
                "not a session file cgp wrote ({e}); cgp reads only session files it wrote itself"
            ))
        }
    };
    if stored.format != SESSION_FILE_FORMAT {
        return fresh(&format!("format is not {SESSION_FILE_FORMAT}"));
    }
    let key = session_key()?;
    let workspace = canonical(dir);
    if stored.workspace != workspace
        || !constant_time_eq(
            stored.mac.as_bytes(),
            mac(&key, &workspace, stored.session.as_bytes()).as_bytes(),
        )
    {
        return fresh(
            "its authentication code does not match: it was not written by cgp on this machine \
             for this workspace, or it was edited (a session names what the model already holds, \
             so cgp trusts only its own)",
        );
    }
    match Session::from_json(stored.session.as_bytes()) {
        Ok(session) => Ok(session),
        Err(e) => fresh(&e.to_string()),
    }
}

/// Write `session` for the workspace `dir` to `path` whole (see the module
/// docs).
pub fn save(path: &Path, dir: &Path, session: &Session) -> Result<(), CommandError> {
    let fail = |e: String| -> CommandError {
        format!("--session: cannot write the session: {}", for_terminal(&e)).into()
    };
    let key = session_key()?;
    let workspace = canonical(dir);
    let text = String::from_utf8(session.to_json()).map_err(|e| fail(e.to_string()))?;
    let stored = StoredSession {
        format: SESSION_FILE_FORMAT.to_owned(),
        mac: mac(&key, &workspace, text.as_bytes()),
        workspace,
        session: text,
    };
    let bytes = serde_json::to_vec(&stored).map_err(|e| fail(e.to_string()))?;
    crate::safe_write::write_file(path, &bytes).map_err(|e| fail(e.to_string()))
}

fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// The machine's session key (32 random bytes, hex) from the data
/// directory, created on first use.
fn session_key() -> Result<Vec<u8>, CommandError> {
    let env = Environment::from_process();
    let dir = env.data_dir.ok_or_else(|| {
        "--session: no data directory to keep the session key in; set CGP_DATA_DIR or HOME"
            .to_owned()
    })?;
    key_in(&dir).map_err(|e| {
        format!(
            "--session: the session key in {}: {}; check that directory's permissions",
            for_terminal(&dir.display().to_string()),
            for_terminal(&e.to_string())
        )
        .into()
    })
}

fn key_in(dir: &Path) -> std::io::Result<Vec<u8>> {
    let path = dir.join(SESSION_KEY_FILE);
    if let Ok(text) = std::fs::read_to_string(&path) {
        if let Some(key) = from_hex(text.trim()).filter(|k| k.len() == 32) {
            return Ok(key);
        }
        return Err(std::io::Error::other(format!(
            "{} is not a session key; delete it (sessions written with it start afresh)",
            path.display()
        )));
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let key = random_key()?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(&path) {
        Ok(mut f) => {
            f.write_all(hex(&key).as_bytes())?;
            f.sync_all()?;
            Ok(key)
        }
        // Another cgp created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => key_in_existing(&path),
        Err(e) => Err(e),
    }
}

fn key_in_existing(path: &Path) -> std::io::Result<Vec<u8>> {
    let text = std::fs::read_to_string(path)?;
    from_hex(text.trim())
        .filter(|k| k.len() == 32)
        .ok_or_else(|| std::io::Error::other("the session key is being written; try again"))
}

fn random_key() -> std::io::Result<Vec<u8>> {
    let mut key = vec![0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
    Ok(key)
}

/// HMAC-SHA256 (RFC 2104) of the workspace path and the session bytes.
fn mac(key: &[u8], workspace: &Path, session: &[u8]) -> String {
    let mut message = Vec::with_capacity(session.len() + 256);
    message.extend_from_slice(SESSION_FILE_FORMAT.as_bytes());
    message.push(0);
    message.extend_from_slice(workspace.to_string_lossy().as_bytes());
    message.push(0);
    message.extend_from_slice(session);
    hex(&hmac_sha256(key, &message))
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&sha256(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let mut inner = pad(0x36);
    inner.extend_from_slice(message);
    let mut outer = pad(0x5c);
    outer.extend_from_slice(&sha256(&inner));
    sha256(&outer)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() {
        let out = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&out),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
