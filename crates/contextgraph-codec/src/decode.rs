//! Decoding one line into an [`Envelope`], and encoding one envelope as a line.
//!
//! Every failure is a typed [`DecodeError`] for *that line only*: the caller
//! answers `bad_request` (echoing the `id` when one could be read) and moves
//! on to the next line.

use std::fmt;

use serde_json::Value;

use crate::envelope::{Envelope, EnvelopeVisitor, ENVELOPE_TYPES};

/// Why one line is not an envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes are not UTF-8 (the first bad byte is at `valid_up_to`).
    InvalidUtf8 {
        /// Offset of the first invalid byte.
        valid_up_to: usize,
    },
    /// The text is not one JSON value.
    InvalidJson {
        /// Column (1-based, in bytes) where parsing failed.
        column: usize,
        /// The parser's explanation.
        reason: String,
    },
    /// The JSON value is not an object.
    NotAnObject,
    /// The object has no string `type` member.
    MissingType {
        /// The object's `id`, if it had a string one.
        id: Option<String>,
    },
    /// A known envelope type whose members are missing or mistyped.
    Malformed {
        /// The envelope type.
        type_name: String,
        /// Its `id`, if it had a string one (echo it on the `bad_request`).
        id: Option<String>,
        /// What is wrong.
        reason: String,
    },
}

impl DecodeError {
    /// The request `id` recovered from the bad line, to echo on the error reply.
    pub fn id(&self) -> Option<&str> {
        match self {
            DecodeError::MissingType { id } | DecodeError::Malformed { id, .. } => id.as_deref(),
            _ => None,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::InvalidUtf8 { valid_up_to } => {
                write!(
                    f,
                    "line is not valid UTF-8 (first bad byte at offset {valid_up_to})"
                )
            }
            DecodeError::InvalidJson { column, reason } => {
                write!(f, "line is not JSON (column {column}): {reason}")
            }
            DecodeError::NotAnObject => {
                f.write_str("line is JSON but not an object; an envelope is a JSON object")
            }
            DecodeError::MissingType { .. } => write!(
                f,
                "object has no string \"type\" member (expected one of {})",
                ENVELOPE_TYPES.join(", ")
            ),
            DecodeError::Malformed {
                type_name, reason, ..
            } => write!(f, "malformed {type_name} envelope: {reason}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decode one line (without its newline; surrounding whitespace is allowed).
///
/// The fast path deserializes straight into typed values. Only when it fails
/// is the line parsed again into a JSON tree, to classify the failure and to
/// accept lines whose only fault is a malformed member the envelope type does
/// not use (U1).
pub fn decode_envelope(line: &[u8]) -> Result<Envelope, DecodeError> {
    match serde_json::from_slice::<Envelope>(line) {
        Ok(env) => Ok(env),
        Err(_) => classify_failure(line),
    }
}

fn classify_failure(line: &[u8]) -> Result<Envelope, DecodeError> {
    let text = std::str::from_utf8(line).map_err(|e| DecodeError::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    let value: Value = serde_json::from_str(text).map_err(|e| DecodeError::InvalidJson {
        column: e.column(),
        reason: strip_position(&e),
    })?;
    let Value::Object(object) = value else {
        return Err(DecodeError::NotAnObject);
    };
    let id = object.get("id").and_then(Value::as_str).map(str::to_owned);
    let type_name = match object.get("type").and_then(Value::as_str) {
        Some(t) => t.to_owned(),
        None => return Err(DecodeError::MissingType { id }),
    };
    if !ENVELOPE_TYPES.contains(&type_name.as_str()) {
        return Ok(Envelope::Unknown { type_name, id });
    }
    drop(object);
    // Decode again knowing the type, so members it does not use are skipped
    // even where they precede `type`: success means the fast path tripped over
    // an irrelevant member, which U1 says to ignore. Decoding the original
    // bytes (not the tree) keeps duplicate members an error.
    let hint = ENVELOPE_TYPES.iter().copied().find(|t| *t == type_name);
    let mut de = serde_json::Deserializer::from_slice(line);
    let decoded = serde::de::DeserializeSeed::deserialize(EnvelopeVisitor { hint }, &mut de)
        .and_then(|env| de.end().map(|()| env));
    decoded.map_err(|e| DecodeError::Malformed {
        type_name,
        id,
        reason: strip_position(&e),
    })
}

/// serde_json appends " at line L column C"; the column is reported separately.
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// Append `env` as one NDJSON line (JSON + `\n`) to `out`.
///
/// JSON string escaping turns every newline inside a value into `\n`, so the
/// only literal newline written is the terminator.
pub fn encode_envelope_into(env: &Envelope, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    serde_json::to_writer(&mut *out, env)?;
    out.push(b'\n');
    Ok(())
}

/// `env` as one NDJSON line, newline included.
pub fn encode_line(env: &Envelope) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(128);
    encode_envelope_into(env, &mut out)?;
    Ok(out)
}
