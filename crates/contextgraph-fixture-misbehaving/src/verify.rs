//! Cache revalidation (V1–V4), honest by default, the two modes that
//! break it: `rubber-stamp-verify` (V1) and `hollow-verify` (V2), and
//! `own-name-verify`, which reads `provider_id` as its own name.

use std::collections::{BTreeMap, BTreeSet};

use contextgraph_types::{FrameId, FrameVerdict, Verdict, VerifyRequest, VerifyResponse};

use crate::mode::Mode;

/// Most verdicts one reply carries. A peer controls the request size; an
/// identity beyond the cap gets no verdict, which a host reads as `unknown`
/// (V2) — honest, and it keeps the reply within any host's line cap.
pub const MAX_VERDICTS: usize = 4096;

/// Answer `request` given what is served now: frame id → current content digest.
///
/// Honest rule, per distinct identity in request order, by frame id and
/// digest (`provider_id` is the host's label for this provider, echoed back
/// and never judged):
/// - an id not served any more → `gone`;
/// - presented digest equal to the current one → `valid` (the only case);
/// - anything else, a missing digest included → `stale` with the current
///   digest as `replacement_digest` (V4: a digest, never a body).
pub fn verify(
    mode: Mode,
    own_name: &str,
    current: &BTreeMap<String, Option<String>>,
    request: &VerifyRequest,
) -> VerifyResponse {
    if mode == Mode::HollowVerify {
        return VerifyResponse::default();
    }
    let mut seen: BTreeSet<&FrameId> = BTreeSet::new();
    let verdicts = request
        .frames
        .iter()
        .filter(|id| seen.insert(*id))
        .take(MAX_VERDICTS)
        .map(|id| FrameVerdict {
            frame: id.clone(),
            verdict: if mode == Mode::RubberStampVerify {
                Verdict::Valid
            } else if mode == Mode::OwnNameVerify && id.provider_id != own_name {
                // The other reading of `provider_id`: the provider's own name.
                Verdict::Unknown
            } else {
                honest_verdict(current, id)
            },
        })
        .collect();
    VerifyResponse { verdicts }
}

fn honest_verdict(current: &BTreeMap<String, Option<String>>, id: &FrameId) -> Verdict {
    match current.get(&id.frame_id) {
        None => Verdict::Gone,
        Some(digest) if id.content_digest.is_some() && *digest == id.content_digest => {
            Verdict::Valid
        }
        Some(digest) => Verdict::Stale {
            replacement_digest: digest.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current() -> BTreeMap<String, Option<String>> {
        BTreeMap::from([("a".to_owned(), Some("sha256:aa".to_owned()))])
    }

    fn request(ids: &[(&str, &str, Option<&str>)]) -> VerifyRequest {
        VerifyRequest {
            frames: ids
                .iter()
                .map(|(p, f, d)| FrameId::new(*p, *f, d.map(str::to_owned)))
                .collect(),
        }
    }

    #[test]
    fn own_name_verify_answers_unknown_for_a_host_label() {
        let req = request(&[
            ("me", "a", Some("sha256:aa")),
            ("host-key", "a", Some("sha256:aa")),
        ]);
        let got: Vec<_> = verify(Mode::OwnNameVerify, "me", &current(), &req)
            .verdicts
            .into_iter()
            .map(|v| v.verdict)
            .collect();
        assert_eq!(got, [Verdict::Valid, Verdict::Unknown]);
    }

    #[test]
    fn honest_verdicts_compare_digests() {
        let req = request(&[
            ("me", "a", Some("sha256:aa")),
            ("me", "a", Some("sha256:bb")),
            ("me", "a", None),
            ("me", "zz", Some("sha256:aa")),
            ("a-host-key", "a", Some("sha256:aa")),
            ("me", "a", Some("sha256:aa")),
        ]);
        let got: Vec<_> = verify(Mode::Normal, "me", &current(), &req)
            .verdicts
            .into_iter()
            .map(|v| v.verdict)
            .collect();
        let stale = Verdict::Stale {
            replacement_digest: Some("sha256:aa".into()),
        };
        assert_eq!(
            got,
            [
                Verdict::Valid,
                stale.clone(),
                stale,
                Verdict::Gone,
                Verdict::Valid
            ]
        );
    }
}
