//! The wire schema checks, through the testkit: our own envelope schema, and
//! the shared one too when `../shared/wire` is present.

use serde_json::Value;

/// Panics, listing every schema error, unless `envelope` is a valid envelope.
pub fn assert_valid_envelope(envelope: &Value) {
    let errors = contextgraph_testkit::schema_errors(envelope);
    assert!(
        errors.is_empty(),
        "envelope violates the wire schema:\n  {}\nenvelope: {envelope}",
        errors.join("\n  ")
    );
}

/// Whether `envelope` is schema-valid (for tests that expect rejection).
pub fn is_valid_envelope(envelope: &Value) -> bool {
    contextgraph_testkit::schema_errors(envelope).is_empty()
}
