//! Fuzz target bodies (not API: hidden from the docs, may change any time).
//!
//! [`config`] is the `config` target's whole body: the libFuzzer program in
//! the repository's `fuzz/` workspace calls it with the fuzzer's bytes, and
//! a stable test replays every committed seed and regression input through
//! it (`tests/it/fuzz_replay.rs`). It panics exactly when a property breaks.

use std::ffi::OsString;
use std::path::Path;

use crate::{Config, ConfigError, Environment};

fn environment() -> Environment {
    Environment::from_lookup(|name| match name {
        "HOME" => Some(OsString::from("/fuzz/home")),
        _ => None,
    })
}

/// `config`: the input as one workspace `cgp.toml` (non-UTF-8 input is
/// refused before parsing, as `read_file` does). Parsing gives a
/// configuration or a typed error whose message names the file and, for an
/// error inside it, a position on one of its lines. A configuration
/// renders (`cgp config`), and the rendering is itself a `cgp.toml` that
/// parses to the same providers.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/fuzz/ws/cgp.toml");
    match Config::from_toml_str(text, path, &environment()) {
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.starts_with("/fuzz/ws/cgp.toml"),
                "an error names the file: {message}"
            );
            if let ConfigError::At { line, column, .. } = &e {
                let lines = text.split('\n').count().max(1);
                assert!(
                    (1..=lines).contains(line) && *column >= 1,
                    "position {line}:{column} is in the file ({lines} lines): {message}"
                );
            }
        }
        Ok(config) => {
            let rendered = config.to_toml();
            let again = Config::from_toml_str(&rendered, path, &environment())
                .unwrap_or_else(|e| panic!("the rendering parses: {e}\n{rendered}"));
            assert_eq!(
                again.providers.iter().map(|p| &p.name).collect::<Vec<_>>(),
                config.providers.iter().map(|p| &p.name).collect::<Vec<_>>(),
                "the rendering names the same providers"
            );
        }
    }
}
