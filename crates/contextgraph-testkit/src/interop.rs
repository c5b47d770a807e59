//! Other implementations' wire data, in `../shared/wire/` beside the
//! repository: what interoperability tests run against.
//!
//! Every accessor returns `None` when the directory is absent, after printing
//! a note that names the skipped test data, so a clone on its own passes its
//! tests and says what it did not check. With `CGP_REQUIRE_SHARED=1` (set by
//! `.ci/run`) an absent directory is a panic instead, so CI never skips them.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

/// The shared wire directory, `../shared/wire` relative to the repository root.
pub fn wire_dir() -> PathBuf {
    // crates/contextgraph-testkit → repo root → its sibling `shared`.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/wire")
}

/// Whether the shared wire data is present (no note printed).
pub fn available() -> bool {
    wire_dir().is_dir()
}

/// A file under `../shared/wire/`, or `None` (with a printed note) when the
/// directory is absent.
pub fn wire_file(name: &str) -> Option<PathBuf> {
    if available() {
        return Some(wire_dir().join(name));
    }
    if std::env::var_os("CGP_REQUIRE_SHARED").is_some_and(|v| v == "1") {
        panic!(
            "CGP_REQUIRE_SHARED=1 but {} is missing: the interoperability tests need it",
            wire_dir().display()
        );
    }
    eprintln!(
        "note: skipping an interoperability check: {} is not present (it reads {name})",
        wire_dir().display()
    );
    None
}

fn read(name: &str) -> Option<String> {
    let path = wire_file(name)?;
    Some(
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read shared wire data {}: {e}", path.display())),
    )
}

pub(crate) fn non_blank_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

pub(crate) fn json_array(name: &str, text: &str) -> Vec<Value> {
    match serde_json::from_str(text) {
        Ok(Value::Array(items)) => items,
        other => panic!("{name} is not a JSON array: {other:?}"),
    }
}

/// The shared full stdio session transcript, as bytes.
pub fn transcript_bytes() -> Option<Vec<u8>> {
    read("full-stdio-session.ndjson").map(String::into_bytes)
}

/// The lines of the shared full stdio session transcript, in order.
pub fn transcript_lines() -> Option<Vec<String>> {
    read("full-stdio-session.ndjson").map(|t| non_blank_lines(&t))
}

/// The first envelope of type `kind` (`"query"`, `"frames"`,
/// `"handshake_ack"`, …) in the shared stdio session transcript; `None`
/// when the data is absent. Panics when the transcript has no such envelope
/// or a line is not JSON: the shared data is fixed, so that is a broken
/// checkout, not a case to handle.
pub fn transcript_envelope(kind: &str) -> Option<Value> {
    let lines = transcript_lines()?;
    let found = lines
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).expect("one JSON envelope per line"))
        .find(|v| v["type"] == kind);
    Some(found.unwrap_or_else(|| panic!("the shared transcript has no {kind:?} envelope")))
}

/// The shared reference messages (a JSON array of envelopes).
pub fn reference_messages() -> Option<Vec<Value>> {
    read("reference-messages.json").map(|t| json_array("reference-messages.json", &t))
}

/// The shared envelope schema, compiled once per test process; `None`
/// (silently: callers check our own schema regardless) when absent.
pub fn envelope_schema() -> Option<&'static jsonschema::Validator> {
    static SCHEMA: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let path = wire_dir().join("contextgraph-envelope.schema.json");
            let text = std::fs::read_to_string(path).ok()?;
            let schema: Value = serde_json::from_str(&text).expect("the shared schema is JSON");
            Some(jsonschema::validator_for(&schema).expect("the shared schema compiles"))
        })
        .as_ref()
}
