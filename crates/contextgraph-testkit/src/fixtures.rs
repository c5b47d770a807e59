//! The project's own wire fixtures (`crates/contextgraph-testkit/fixtures/`,
//! described in its README), always present in the repository.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The directory holding the fixtures.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A fixture file's bytes. Panics with the path when it cannot be read: the
/// fixtures are part of the repository, so a missing one is a broken checkout.
pub fn read(name: &str) -> Vec<u8> {
    let path = dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()))
}

fn read_text(name: &str) -> String {
    String::from_utf8(read(name)).unwrap_or_else(|e| panic!("fixture {name} is not UTF-8: {e}"))
}

/// The whole stdio session transcript, as recorded bytes.
pub fn transcript_bytes() -> Vec<u8> {
    read("stdio-session.ndjson")
}

/// The session transcript's lines, in order (blank lines skipped).
pub fn transcript_lines() -> Vec<String> {
    crate::interop::non_blank_lines(&read_text("stdio-session.ndjson"))
}

/// The reference messages (a JSON array of envelopes).
pub fn reference_messages() -> Vec<Value> {
    crate::interop::json_array(
        "reference-messages.json",
        &read_text("reference-messages.json"),
    )
}

/// The envelope JSON Schema, as a JSON value.
pub fn envelope_schema() -> Value {
    serde_json::from_str(&read_text("envelope.schema.json"))
        .unwrap_or_else(|e| panic!("fixtures/envelope.schema.json is not JSON: {e}"))
}
