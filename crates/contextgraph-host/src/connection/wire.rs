//! Request lines as the host writes them: encoded in place, with a
//! correlated query's id serialized without building a String.

use contextgraph_types::{ContextQuery, VerifyRequest};
use serde::Serialize;

#[derive(Serialize)]
pub(super) struct QueryOut<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) query: &'a ContextQuery,
}

#[derive(Serialize)]
pub(super) struct VerifyOut<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) request: &'a VerifyRequest,
}

pub(super) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut line = Vec::with_capacity(256);
    encode_into(value, &mut line);
    line
}

/// Append `value` as one NDJSON line to `out`.
pub(super) fn encode_into<T: Serialize>(value: &T, out: &mut Vec<u8>) {
    let start = out.len();
    // Serializing our own typed values into a Vec cannot fail: no map has
    // non-string keys and floats serialize (non-finite ones as null).
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"{}");
    }
    out.push(b'\n');
}

/// A correlated query's id, `q<n>`, serialized without building a String.
pub(super) struct QueryId(pub(super) u64);

impl Serialize for QueryId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("q{}", self.0))
    }
}

#[derive(Serialize)]
pub(super) struct CorrelatedQueryOut<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) id: QueryId,
    pub(super) query: &'a ContextQuery,
}
