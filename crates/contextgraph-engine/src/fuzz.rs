//! Fuzz target bodies (not API: hidden from the docs, may change any time).
//!
//! [`session`] is the `session` target's whole body: the libFuzzer program
//! in the repository's `fuzz/` workspace calls it with the fuzzer's bytes,
//! and a stable test replays every committed seed and regression input
//! through it (`tests/fuzz_replay/mod.rs`). It panics exactly when a property
//! breaks.

use crate::Session;

/// `session`: the input as a session file (`cgp context --session FILE`).
/// Loading gives a session or a typed error; a loaded session's stored
/// form loads back to the same session (what we write, we read), and its
/// accessors answer within the limits the load checked.
pub fn session(data: &[u8]) {
    match Session::from_json(data) {
        Err(e) => {
            let _ = e.to_string();
        }
        Ok(session) => {
            let stored = session.to_json();
            let back = Session::from_json(&stored)
                .unwrap_or_else(|e| panic!("a stored session loads back: {e}"));
            assert_eq!(back, session, "from_json(to_json(s)) == s");
            assert!(session.held().iter().all(|h| h.turn <= session.turn()));
            let _ = (
                session.totals(),
                session.token(),
                session.unnamed_provider(),
            );
        }
    }
}
