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

use std::io::Read;
use std::path::Path;

use contextgraph_engine::session::MAX_SESSION_BYTES;
use contextgraph_engine::Session;

use super::CommandError;
use crate::terminal::for_terminal;

/// The session in `path`: a fresh one when the file does not exist, or when
/// it is not a valid session (said on stderr).
pub fn load(path: &Path) -> Result<Session, CommandError> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Session::new()),
        Err(e) => {
            return Err(format!(
                "--session {}: cannot read it: {}",
                for_terminal(&path.display().to_string()),
                for_terminal(&e.to_string())
            )
            .into())
        }
    };
    let mut bytes = Vec::new();
    let cap = u64::try_from(MAX_SESSION_BYTES).unwrap_or(u64::MAX) + 1;
    if let Err(e) = file.take(cap).read_to_end(&mut bytes) {
        return Err(format!(
            "--session {}: cannot read it: {}; pass a session file (or a new path)",
            for_terminal(&path.display().to_string()),
            for_terminal(&e.to_string())
        )
        .into());
    }
    match Session::from_json(&bytes) {
        Ok(session) => Ok(session),
        Err(e) => {
            eprintln!(
                "warning: --session {}: {}; starting a fresh session (everything is sent again)",
                for_terminal(&path.display().to_string()),
                for_terminal(&e.to_string())
            );
            Ok(Session::new())
        }
    }
}

/// Write `session` to `path` whole (see the module docs).
pub fn save(path: &Path, session: &Session) -> Result<(), CommandError> {
    crate::safe_write::write_file(path, &session.to_json()).map_err(|e| {
        format!(
            "--session: cannot write the session: {}",
            for_terminal(&e.to_string())
        )
        .into()
    })
}
