//! V1–V4, for providers declaring `verify`: present identities the suite
//! knows the truth about and compare the verdicts.
//!
//! - each frame of the baseline answer whose `content_digest` is the digest
//!   of its content, as served → `valid`;
//! - one of them with a mutated digest → `stale` (the frame is still
//!   served), any `replacement_digest` a digest equal to the served one;
//! - an id the provider never served, and a real id under another
//!   provider's name → `gone` or `unknown`, never `valid`;
//! - one verdict per identity asked (V2), none for identities not asked.

use contextgraph_provider_sdk::sha256_digest;
use contextgraph_types::{is_sha256_digest, FrameId, Verdict, VerifyRequest};

use super::{Evidence, Main, Outcome};

/// Most real identities presented.
const MAX_REAL: usize = 8;

pub(crate) fn verify_honesty(m: &mut Main<'_>) -> Outcome {
    let provider_id = match m.ack() {
        Ok(a) if !a.capabilities.verify => {
            return Outcome::not_applicable(
                "capabilities.verify is false; hosts re-query instead (V2)",
            )
        }
        Ok(a) => a.provider.name.clone(),
        Err(o) => return o,
    };
    let base = match m.base_frames() {
        Ok(b) => b,
        Err(o) => return o,
    };
    let real: Vec<FrameId> = base
        .result
        .frames
        .iter()
        // Only digests that are the digest of the content: a frame lying
        // about its digest is frame-validity's finding (D1), and verifying
        // the lie would blame verify for it.
        .filter(|f| match (&f.content_digest, &f.content) {
            (Some(d), Some(c)) => *d == sha256_digest(c.as_bytes()),
            _ => false,
        })
        .take(MAX_REAL)
        .map(|f| f.frame_id(&provider_id))
        .collect();
    let Some(first) = real.first().cloned() else {
        return Outcome::skipped(
            "no frame of the baseline answer carries a content_digest matching its content, so there is nothing to verify (digest-less frames are re-queried, V1)",
        );
    };
    let served_digest = first.content_digest.clone();
    let mutated = FrameId::new(
        provider_id.clone(),
        first.frame_id.clone(),
        Some(sha256_digest(
            b"cgp inspect: a digest this provider never served",
        )),
    );
    let unknown = FrameId::new(
        provider_id.clone(),
        "cgp-inspect/no-such-frame",
        Some(sha256_digest(b"cgp inspect: no such frame")),
    );
    let foreign = FrameId::new(
        "cgp-inspect-other-provider",
        first.frame_id.clone(),
        served_digest.clone(),
    );
    let mut frames = real.clone();
    frames.extend([mutated.clone(), unknown.clone(), foreign.clone()]);
    let request = VerifyRequest { frames };
    let probe = match m.live() {
        Ok(p) => p,
        Err(o) => return o,
    };
    let response = match probe.verify(&request, "waiting for the verified reply") {
        Ok(Ok(r)) => r,
        Ok(Err(other)) => {
            return Outcome::fail(format!(
                "V2: a provider declaring verify answered verify with {other} instead of verified"
            ))
        }
        Err(b) => return Outcome::fail(b.0),
    };
    let mut e = Evidence::default();
    for v in &response.verdicts {
        if !request.frames.contains(&v.frame) {
            e.fail(format!(
                "V2: a verdict for {:?}/{:?}, which was not asked; verdicts echo the identity asked in full",
                v.frame.provider_id, v.frame.frame_id
            ));
        }
    }
    let verdict = |id: &FrameId| {
        response
            .verdicts
            .iter()
            .find(|v| &v.frame == id)
            .map(|v| &v.verdict)
    };
    let mut missing = 0;
    for id in &real {
        match verdict(id) {
            Some(Verdict::Valid) => {}
            Some(other) => e.fail(format!(
                "V1: frame {:?} with the digest just served was answered {}; valid is the only honest verdict for unchanged content",
                id.frame_id,
                other.status()
            )),
            None => missing += 1,
        }
    }
    match verdict(&mutated) {
        Some(Verdict::Stale { replacement_digest }) => match replacement_digest {
            Some(d) if !is_sha256_digest(d) => e.fail(format!(
                "V4: the stale verdict's replacement_digest {d:?} is not a sha256 digest"
            )),
            Some(d) if Some(d) != served_digest.as_ref() => e.fail(format!(
                "V4: the stale verdict's replacement_digest {d} is not the digest just served ({})",
                served_digest.as_deref().unwrap_or("none")
            )),
            _ => e.note(format!("mutated digest of {:?}: stale", first.frame_id)),
        },
        Some(Verdict::Valid) => e.fail(format!(
            "V1: frame {:?} with a digest it never served was answered valid",
            first.frame_id
        )),
        Some(other) => e.fail(format!(
            "V1: frame {:?} is still served but a mutated digest was answered {} instead of stale",
            first.frame_id,
            other.status()
        )),
        None => missing += 1,
    }
    for (label, id) in [
        ("an unknown frame id", &unknown),
        ("another provider's identity", &foreign),
    ] {
        match verdict(id) {
            Some(Verdict::Valid) => e.fail(format!("V1: {label} was answered valid")),
            Some(v @ (Verdict::Gone | Verdict::Unknown)) => {
                e.note(format!("{label}: {}", v.status()))
            }
            Some(other) => e.fail(format!(
                "{label} was answered {}; expected gone or unknown",
                other.status()
            )),
            None => missing += 1,
        }
    }
    if missing > 0 {
        e.fail(format!(
            "V2: {missing} of {} identities got no verdict; a provider declaring verify answers every identity",
            request.frames.len()
        ));
    } else {
        e.note(format!("{} real digest(s): valid", real.len()));
    }
    e.finish()
}
