//! The honesty checks the runner applies before anything leaves the
//! provider, as plain functions a provider can also call in its own tests.
//!
//! A host audits every answer and quarantines a provider whose frames break
//! budget honesty (B1, B3, B4), digests (D1, F5) or frame validity (F1–F4);
//! it drops *all* of that answer's frames (B2). Catching the same faults on
//! the provider side turns a silent quarantine into a named `internal` error
//! the author sees on the first run.

use std::collections::{HashMap, HashSet};

use contextgraph_types::validate::{Anchor, ContentHasher};
use contextgraph_types::{
    is_sha256_digest, Capabilities, ContextQuery, ContextQueryResult, FrameId, FrameVerdict,
    Verdict, VerifyRequest, VerifyResponse, Violation,
};

use crate::digest::Sha256Hasher;

/// Every reason `result` may not be sent as the answer to `query` by a
/// provider with `capabilities`: the full `ContextQueryResult::validate_with`
/// audit with content digests recomputed (B1, B3, B4, Q1, `as_of`, F1–F5, D1,
/// P1–P3, G1–G2, E1), plus P5 — a frame in a representation the provider did
/// not advertise.
pub fn audit_answer(
    query: &ContextQuery,
    result: &ContextQueryResult,
    capabilities: &Capabilities,
) -> Vec<Violation> {
    audit_answer_hashing(query, result, capabilities, &Sha256Hasher)
}

/// [`audit_answer`] with content digests recomputed by `hasher` (the
/// runner's passes digests its own code computed over equal bytes, see
/// [`crate::digest_memo`]).
pub(crate) fn audit_answer_hashing(
    query: &ContextQuery,
    result: &ContextQueryResult,
    capabilities: &Capabilities,
    hasher: &dyn ContentHasher,
) -> Vec<Violation> {
    let mut violations = result.validate_with(query, hasher);
    for (i, frame) in result.frames.iter().enumerate() {
        if !capabilities.offers_representation(frame.representation) {
            violations.push(Violation {
                anchor: Anchor::P5,
                path: format!("frames[{i}].representation"),
                message: format!(
                    "representation {} was not advertised in capabilities.representations",
                    frame.representation
                ),
            });
        }
    }
    violations
}

/// V4: every `stale` verdict's `replacement_digest`, when present, is a
/// digest (`sha256:` + 64 lowercase hex), never a body.
pub fn audit_verdicts(response: &VerifyResponse) -> Vec<Violation> {
    response
        .verdicts
        .iter()
        .enumerate()
        .filter_map(|(i, v)| match &v.verdict {
            Verdict::Stale {
                replacement_digest: Some(d),
            } if !is_sha256_digest(d) => Some(Violation {
                anchor: Anchor::V4,
                path: format!("verdicts[{i}].replacement_digest"),
                message: "replacement_digest is not sha256: followed by 64 lowercase hex digits"
                    .to_owned(),
            }),
            _ => None,
        })
        .collect()
}

/// V2: exactly one verdict per distinct requested identity, in request
/// order. An identity the provider did not answer gets `unknown` (silence is
/// never validity); a verdict for an identity that was not asked is dropped,
/// as is every verdict after the first for the same identity.
pub fn complete_verdicts(request: &VerifyRequest, response: VerifyResponse) -> VerifyResponse {
    let mut answered: HashMap<FrameId, Verdict> = HashMap::with_capacity(response.verdicts.len());
    for v in response.verdicts {
        answered.entry(v.frame).or_insert(v.verdict);
    }
    let mut seen: HashSet<&FrameId> = HashSet::with_capacity(request.frames.len());
    let verdicts = request
        .frames
        .iter()
        .filter(|id| seen.insert(*id))
        .map(|id| FrameVerdict {
            frame: id.clone(),
            verdict: answered.remove(id).unwrap_or(Verdict::Unknown),
        })
        .collect();
    VerifyResponse { verdicts }
}
