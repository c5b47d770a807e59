//! Verify by frame id and digest (V1–V4): the helpers a provider's `verify`
//! is built from.
//!
//! # Whose name is `provider_id`?
//!
//! A `FrameId` presented in a `verify` request carries a `provider_id`, but
//! that is the *host's* label for the provider: its routing and consent key
//! (in this project, the `cgp.toml` table name; in other implementations,
//! whatever key the host configured). A provider cannot know that key, and
//! two hosts may call the same provider by different names. So a provider
//! judges an identity by its `frame_id` and `content_digest` alone and echoes
//! the whole identity back unchanged, `provider_id` included; it never
//! answers `unknown` merely because the label is not its own handshake name.
//! [`verify_each`] makes that the only possible shape: the judging function
//! is never shown the label.
//!
//! Honesty stays with the digest: `valid` only when the presented digest is
//! what the provider would serve now under that frame id ([`verdict`]).

use contextgraph_types::{FrameVerdict, Verdict, VerifyRequest, VerifyResponse};

/// What a provider serves now under a frame id, as far as `verify` can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served<'a> {
    /// Served now, with this content digest.
    Now(&'a str),
    /// No longer served (deleted, renamed away, out of scope).
    Gone,
    /// The provider cannot tell (an I/O error, an id it cannot parse as one
    /// of its own); hosts evict on it, so it is always honest.
    Unknown,
}

/// The honest verdict for a presented digest given what is served now:
///
/// | served now | presented digest | verdict |
/// |---|---|---|
/// | `Gone` | any | `gone` |
/// | `Unknown` | any | `unknown` |
/// | `Now(d)` | none | `unknown` (V1: nothing to compare) |
/// | `Now(d)` | `d` | `valid` |
/// | `Now(d)` | another | `stale`, `replacement_digest` `d` (V4) |
pub fn verdict(presented: Option<&str>, served: Served<'_>) -> Verdict {
    match (served, presented) {
        (Served::Gone, _) => Verdict::Gone,
        (Served::Unknown, _) | (Served::Now(_), None) => Verdict::Unknown,
        (Served::Now(now), Some(held)) if now == held => Verdict::Valid,
        (Served::Now(now), Some(_)) => Verdict::Stale {
            replacement_digest: Some(now.to_owned()),
        },
    }
}

/// One verdict per identity of `request`, in request order, each echoing its
/// identity in full. `judge` sees only the frame id and the presented
/// digest (never the host's `provider_id` label, see the
/// [module documentation](self)). Identities past the first `limit` are
/// answered `unknown` without being judged, which bounds the work one
/// request can cause and is always honest (V3: hosts evict on it).
pub fn verify_each(
    request: &VerifyRequest,
    limit: usize,
    mut judge: impl FnMut(&str, Option<&str>) -> Verdict,
) -> VerifyResponse {
    let verdicts = request
        .frames
        .iter()
        .enumerate()
        .map(|(i, id)| FrameVerdict {
            frame: id.clone(),
            verdict: if i < limit {
                judge(&id.frame_id, id.content_digest.as_deref())
            } else {
                Verdict::Unknown
            },
        })
        .collect();
    VerifyResponse { verdicts }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_types::FrameId;

    #[test]
    fn verdict_table() {
        let now = Served::Now("sha256:a");
        assert_eq!(verdict(Some("sha256:a"), now), Verdict::Valid);
        assert_eq!(
            verdict(Some("sha256:b"), now),
            Verdict::Stale {
                replacement_digest: Some("sha256:a".into())
            }
        );
        assert_eq!(verdict(None, now), Verdict::Unknown);
        assert_eq!(verdict(Some("sha256:a"), Served::Gone), Verdict::Gone);
        assert_eq!(verdict(Some("sha256:a"), Served::Unknown), Verdict::Unknown);
    }

    #[test]
    fn the_label_is_echoed_and_never_judged_and_the_limit_holds() {
        let request = VerifyRequest {
            frames: vec![
                FrameId::new("docs-a", "x", Some("sha256:a".into())),
                FrameId::new("some-host-key", "x", Some("sha256:a".into())),
                FrameId::new("docs-a", "y", Some("sha256:a".into())),
            ],
        };
        let response = verify_each(&request, 2, |frame_id, digest| {
            assert_eq!(frame_id, "x", "past the limit nothing is judged");
            verdict(digest, Served::Now("sha256:a"))
        });
        let got: Vec<_> = response
            .verdicts
            .iter()
            .map(|v| (v.frame.clone(), v.verdict.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (request.frames[0].clone(), Verdict::Valid),
                (request.frames[1].clone(), Verdict::Valid),
                (request.frames[2].clone(), Verdict::Unknown),
            ]
        );
    }
}
