//! Test support for the contextgraph workspace (not published).
//!
//! Gives every crate's tests the same view of `../shared/` — the real wire
//! data other CGP implementations exchange, and the envelope JSON Schema — so
//! no crate grows its own copy of the loading code.

#![warn(missing_docs)]

use std::path::PathBuf;
use std::sync::OnceLock;

pub mod sandbox;

use serde_json::Value;

/// The shared data directory, `../shared` relative to the repository root.
pub fn shared_dir() -> PathBuf {
    // crates/contextgraph-testkit → repo root → its sibling `shared`.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// A file under `../shared/wire/`.
pub fn wire_file(name: &str) -> PathBuf {
    shared_dir().join("wire").join(name)
}

fn read(path: &PathBuf) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read shared wire data {}: {e}", path.display()))
}

/// The lines of the full stdio session transcript, in order.
pub fn transcript_lines() -> Vec<String> {
    read(&wire_file("full-stdio-session.ndjson"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// The reference messages (a JSON array of envelopes).
pub fn reference_messages() -> Vec<Value> {
    let text = read(&wire_file("reference-messages.json"));
    match serde_json::from_str(&text) {
        Ok(Value::Array(items)) => items,
        other => panic!("reference-messages.json is not a JSON array: {other:?}"),
    }
}

/// The envelope schema, compiled once per test process.
pub fn envelope_schema() -> &'static jsonschema::Validator {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text = read(&wire_file("contextgraph-envelope.schema.json"));
        let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        jsonschema::validator_for(&schema).expect("schema compiles")
    })
}

/// Every schema error of `envelope`, as readable strings (empty when valid).
pub fn schema_errors(envelope: &Value) -> Vec<String> {
    envelope_schema()
        .iter_errors(envelope)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Panic with every schema error when `envelope` does not validate.
#[track_caller]
pub fn assert_schema_valid(envelope: &Value) {
    let errors = schema_errors(envelope);
    assert!(
        errors.is_empty(),
        "envelope does not validate against the schema:\n{}\n{envelope}",
        errors.join("\n")
    );
}

/// Parse an NDJSON line (with or without its newline) and assert it validates.
#[track_caller]
pub fn assert_line_schema_valid(line: &[u8]) {
    let value: Value =
        serde_json::from_slice(line).unwrap_or_else(|e| panic!("emitted line is not JSON: {e}"));
    assert_schema_valid(&value);
}

/// The workspace's provider binaries tests spawn: the docs provider and the
/// misbehaving provider. Built once per test process with the calling test
/// binary's profile and target directory, so a test never spawns a stale
/// binary or one from another profile.
pub fn provider_binary(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary has a path");
        // Tests run from target/<profile>/deps/.
        let dir = exe
            .parent()
            .and_then(std::path::Path::parent)
            .expect("tests run from target/<profile>/deps")
            .to_path_buf();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .args([
                "build",
                "--quiet",
                "-p",
                "contextgraph-provider-docs",
                "-p",
                "contextgraph-fixture-misbehaving",
                "--bins",
            ]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        if let Some(target) = dir.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let status = cmd.status().expect("cargo runs");
        assert!(status.success(), "building the provider binaries failed");
        dir
    });
    let bin = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "{} missing after build", bin.display());
    bin
}
