//! The shared wire schema, compiled once per test binary.

use std::sync::OnceLock;

use serde_json::Value;

const SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/wire/contextgraph-envelope.schema.json"
);

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let text = std::fs::read_to_string(SCHEMA_PATH)
            .unwrap_or_else(|e| panic!("cannot read {SCHEMA_PATH}: {e}"));
        let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        jsonschema::validator_for(&schema).expect("schema compiles")
    })
}

/// Panics, listing every schema error, unless `envelope` is a valid envelope.
pub fn assert_valid_envelope(envelope: &Value) {
    let errors: Vec<String> = validator()
        .iter_errors(envelope)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "envelope violates the wire schema:\n  {}\nenvelope: {envelope}",
        errors.join("\n  ")
    );
}

/// Whether `envelope` is schema-valid (for tests that expect rejection).
pub fn is_valid_envelope(envelope: &Value) -> bool {
    validator().is_valid(envelope)
}
