//! Envelope schema checks: every envelope a test validates is checked against
//! the project's own schema ([`crate::fixtures`]) and, when `../shared/wire`
//! is present, against the shared one too, so CI (which has it) keeps every
//! check it had and a clone on its own still checks our output.

use std::sync::OnceLock;

use serde_json::Value;

/// Our envelope schema, compiled once per test process.
pub fn envelope_schema() -> &'static jsonschema::Validator {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        jsonschema::validator_for(&crate::fixtures::envelope_schema())
            .expect("fixtures/envelope.schema.json compiles")
    })
}

/// Every schema error of `envelope`, as readable strings (empty when valid):
/// those of our schema, then those of the shared schema when present
/// (prefixed `shared schema:`).
pub fn schema_errors(envelope: &Value) -> Vec<String> {
    let mut errors: Vec<String> = envelope_schema()
        .iter_errors(envelope)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if let Some(shared) = crate::interop::envelope_schema() {
        errors.extend(
            shared
                .iter_errors(envelope)
                .map(|e| format!("shared schema: {} at {}", e, e.instance_path())),
        );
    }
    errors
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
