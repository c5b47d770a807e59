//! E1, for providers declaring `embeddings_fingerprint`: the fingerprint is
//! `<model-id>/<dimensions>[/<normalization>]`, a query vector of that
//! dimension is served, and one of another dimension is refused with
//! `bad_request` (similarities across spaces are meaningless).

use contextgraph_types::validate::{self, Anchor};
use contextgraph_types::{fingerprint_dimensions, ErrorCode, PROTOCOL_VERSION};

use super::{Evidence, Main, Outcome};
use crate::probe::QueryReply;

/// Largest dimension the suite builds a vector for.
const MAX_PROBE_DIMENSIONS: usize = 65_536;

pub(crate) fn embedding_fingerprint(m: &mut Main<'_>) -> Outcome {
    let (fingerprint, problems) =
        match m.ack() {
            Ok(a) => match &a.capabilities.embeddings_fingerprint {
                None => return Outcome::not_applicable(
                    "no embeddings_fingerprint declared, so a host never sends a query vector (E1)",
                ),
                Some(fp) => (
                    fp.clone(),
                    validate::handshake_ack(
                        &a.protocol_version,
                        &a.provider,
                        &a.capabilities,
                        PROTOCOL_VERSION,
                    )
                    .into_iter()
                    .filter(|v| v.anchor == Anchor::E1)
                    .collect::<Vec<_>>(),
                ),
            },
            Err(o) => return o,
        };
    let mut e = Evidence::default();
    for v in &problems {
        e.fail(v.to_string());
    }
    let Some(dims) = fingerprint_dimensions(&fingerprint) else {
        return e.finish();
    };
    if dims == 0 || dims > MAX_PROBE_DIMENSIONS {
        e.note(format!(
            "fingerprint {fingerprint:?} declares {dims} dimensions; not probed"
        ));
        return Outcome {
            kind: if e.failed() {
                super::Kind::Fail
            } else {
                super::Kind::Skipped
            },
            ..e.finish()
        };
    }
    let base = match m.base_query() {
        Ok(q) => q,
        Err(o) => return o,
    };
    let unit = 1.0 / (dims as f32).sqrt();
    let mut right = base.clone();
    right.embedding = Some(vec![unit; dims]);
    match m.ask(
        &right,
        &format!("waiting for the answer to a {dims}-dimension query vector"),
    ) {
        Ok(QueryReply::Frames(r)) => e.note(format!(
            "a {dims}-dimension vector (fingerprint {fingerprint}): {} frame(s)",
            r.frames.len()
        )),
        Ok(other) => e.fail(format!(
            "a query vector of the declared {dims} dimensions was answered {}",
            other.describe()
        )),
        Err(o) => return o,
    }
    let mut wrong = base;
    wrong.embedding = Some(vec![unit; dims + 1]);
    match m.ask(&wrong, &format!("waiting for the answer to a {}-dimension query vector", dims + 1)) {
        Ok(QueryReply::Error { code, .. }) if ErrorCode::effective(code.as_ref()) == ErrorCode::BadRequest => {
            e.note(format!("a {}-dimension vector: bad_request", dims + 1));
        }
        Ok(other) => e.fail(format!(
            "E1: a {}-dimension vector (the provider declared {dims}) was answered {}; it must be refused with bad_request",
            dims + 1,
            other.describe()
        )),
        Err(o) => return o,
    }
    e.finish()
}
