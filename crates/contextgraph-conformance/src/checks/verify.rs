//! V1–V4, for providers declaring `verify`: present identities the suite
//! knows the truth about and compare the verdicts.
//!
//! - each frame of the baseline answer with a well-formed `content_digest`,
//!   presented with the digest *as the provider declared it* → `valid`. A
//!   host talks back to a provider in that provider's own digests, so a
//!   declared digest that is not the digest of the content (D1, which
//!   frame-validity reports) is still the one to verify: this check probes
//!   verify on its own, whatever the answers' other faults;
//! - one of them with a mutated digest → `stale` (the frame is still
//!   served), any `replacement_digest` a digest equal to the served one;
//! - an id the provider never served → `gone` or `unknown`, never `valid`;
//! - a served frame id and digest under a host's label (another
//!   `provider_id`) → `valid` is the answer under the reading this project
//!   follows (`provider_id` is the host's routing key, which a provider
//!   cannot know); `unknown` or `gone` is reported as *ambiguous* (the
//!   protocol's text also reads as "the provider's own name"), never as a
//!   failure, and `stale` is a lie;
//! - one verdict per identity asked (V2), none for identities not asked.

use std::collections::BTreeMap;

use contextgraph_provider_sdk::sha256_digest;
use contextgraph_types::{is_sha256_digest, FrameId, Verdict, VerifyRequest};

/// The `provider_id` of the host-key probe: a label only a host would choose.
pub(crate) const HOST_KEY: &str = "cgp-inspect-host-key";

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
    let mut e = Evidence::default();
    let real: Vec<FrameId> = base
        .result
        .frames
        .iter()
        // Malformed digests are frame-validity's finding (D1) and no host
        // would present them; every well-formed one is presented as declared.
        .filter(|f| f.content_digest.as_deref().is_some_and(is_sha256_digest))
        .take(MAX_REAL)
        .map(|f| f.frame_id(&provider_id))
        .collect();
    // frame id → the digest of its content, where it differs from the
    // declared one (D1): a verify that answers by the content's digest is
    // consistent with the content, not a verify fault.
    let of_content: BTreeMap<&str, String> = base
        .result
        .frames
        .iter()
        .filter_map(|f| {
            let actual = sha256_digest(f.content.as_deref()?.as_bytes());
            (f.content_digest.as_ref() != Some(&actual)).then_some((f.id.as_str(), actual))
        })
        .collect();
    // The mutated and host-key probes use a frame whose declared digest is
    // its content's when there is one, so their expected verdicts are plain.
    let Some(first) = real
        .iter()
        .find(|id| !of_content.contains_key(id.frame_id.as_str()))
        .or(real.first())
        .cloned()
    else {
        return Outcome::skipped(
            "no frame of the baseline answer carries a well-formed content_digest, so there is nothing to verify (digest-less frames are re-queried, V1)",
        );
    };
    let not_of_content = real
        .iter()
        .filter(|id| of_content.contains_key(id.frame_id.as_str()))
        .count();
    if not_of_content > 0 {
        e.note(format!(
            "{not_of_content} of the {} digest(s) presented are not the digest of their frame's content (D1, reported by frame-validity); verify is asked about the digests as declared",
            real.len()
        ));
    }
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
    let host_key = FrameId::new(HOST_KEY, first.frame_id.clone(), served_digest.clone());
    let mut frames = real.clone();
    frames.extend([mutated.clone(), unknown.clone(), host_key.clone()]);
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
        let actual = of_content.get(id.frame_id.as_str());
        match verdict(id) {
            Some(Verdict::Valid) => {}
            Some(Verdict::Stale {
                replacement_digest: Some(d),
            }) if Some(d) == actual => e.note(format!(
                "frame {:?}: its declared digest is not of its content (D1), and verify answered stale naming the content's digest: consistent with the content",
                id.frame_id
            )),
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
            Some(d)
                if Some(d) != served_digest.as_ref()
                    && Some(d) != of_content.get(first.frame_id.as_str()) =>
            {
                e.fail(format!(
                "V4: the stale verdict's replacement_digest {d} is not the digest just served ({})",
                served_digest.as_deref().unwrap_or("none")
            ))
            }
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
    match verdict(&unknown) {
        Some(Verdict::Valid) => e.fail("V1: an unknown frame id was answered valid"),
        Some(v @ (Verdict::Gone | Verdict::Unknown)) => {
            e.note(format!("an unknown frame id: {}", v.status()))
        }
        Some(other) => e.fail(format!(
            "an unknown frame id was answered {}; expected gone or unknown",
            other.status()
        )),
        None => missing += 1,
    }
    match verdict(&host_key) {
        Some(Verdict::Valid) => e.note(format!(
            "frame {:?} with its served digest under a host's label ({HOST_KEY:?}): valid (judged by frame id and digest)",
            first.frame_id
        )),
        Some(v @ (Verdict::Gone | Verdict::Unknown)) => e.ambiguous(format!(
            "frame {:?} with its served digest under a host's label ({HOST_KEY:?}) was answered {}. If provider_id is the host's routing key (the reading docs/requirements.md#v2 follows), the verdict depends on frame id and digest only and should be valid; if it is the provider's own name, {} is honest. Either way hosts evict on it (V3), so hosts that key providers by their own label never reuse this provider's frames",
            first.frame_id,
            v.status(),
            v.status()
        )),
        Some(other) => e.fail(format!(
            "V2: frame {:?} with the digest just served was answered {} under a host's label ({HOST_KEY:?}); the digest is current, so only valid (or unknown) is honest",
            first.frame_id,
            other.status()
        )),
        None => missing += 1,
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
