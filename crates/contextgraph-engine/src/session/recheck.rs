//! What revalidation found for a held frame, why a frame could not be
//! confirmed (in the model's words), and what to ask again to find held
//! frames outside this turn's answer.

use contextgraph_compose::{ProviderOutcome as ComposeOutcome, ProviderStatus};
use contextgraph_host::EvictionReason;
use contextgraph_types::ContextFrame;

use super::{key_of, HeldFrame, Key};

/// A held frame's revalidation outcome.
pub(super) enum Check {
    Valid,
    Evicted(EvictionReason),
}

pub(super) fn why(reason: &EvictionReason) -> String {
    match reason {
        EvictionReason::NoDigest => "it has no content digest, so it cannot be verified".into(),
        EvictionReason::ProviderCannotVerify => "its provider cannot verify frames".into(),
        EvictionReason::Stale { .. } => "its source changed".into(),
        EvictionReason::Gone => "its source is gone".into(),
        EvictionReason::Unknown => "its provider did not confirm it".into(),
        EvictionReason::VerifyFailed { detail } => format!(
            "verifying it failed: {}",
            contextgraph_types::display_text::bounded(detail, 120)
        ),
        EvictionReason::UnknownProvider => "its provider is no longer configured".into(),
        _ => "it could not be confirmed".into(),
    }
}

/// The accepted frame `key` in `outcomes`, if some provider served it.
pub(super) fn accepted<'a>(outcomes: &'a [ComposeOutcome], key: &Key) -> Option<&'a ContextFrame> {
    outcomes
        .iter()
        .filter(|o| o.provider_id == key.0)
        .find_map(|o| match &o.status {
            ProviderStatus::Accepted { frames } => frames.iter().find(|f| f.id == key.1),
            _ => None,
        })
}

/// The provider's own digest of frame `key` in `outcomes`, when the host
/// repaired it (D1): what `verify` must present for it later.
pub(super) fn declared_digest(outcomes: &[ComposeOutcome], key: &Key) -> Option<String> {
    outcomes
        .iter()
        .filter(|o| o.provider_id == key.0)
        .flat_map(|o| &o.repairs)
        .find(|r| {
            r.anchor == contextgraph_types::Anchor::D1.as_str()
                && r.frame_id == key.1
                && r.path.ends_with(".content_digest")
        })
        .map(|r| r.declared.clone())
        .filter(|d| contextgraph_types::is_sha256_digest(d))
}

/// The goals to ask again for `frames` (those this turn's answer did not
/// already serve), each once, latest turn first.
pub(super) fn goals_to_ask<'h>(
    frames: impl Iterator<Item = &'h HeldFrame>,
    served: &[ComposeOutcome],
) -> Vec<(&'h str, u64)> {
    let mut goals: Vec<(&str, u64)> = Vec::new();
    for h in frames {
        if accepted(served, &key_of(&h.frame)).is_some() {
            continue;
        }
        match goals.iter_mut().find(|(g, _)| *g == h.goal) {
            Some((_, t)) => *t = (*t).max(h.turn),
            None => goals.push((h.goal.as_str(), h.turn)),
        }
    }
    goals.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    goals
}
