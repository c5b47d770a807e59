//! Every offered frame with its rank: the order in which the composer
//! values them, for reports (`--explain`, `--json`, the HTML report).
//!
//! The audit lists frames in canonical FrameId order so that the record,
//! like the prompt, depends only on the set of frames. A person reading a
//! report wants them best first, as the ranked placement chose them: by
//! declared score, highest first (a score outside 0..=1 is clamped and NaN
//! is 0, as the composer reads it), ties in canonical order. Rank 1 is the
//! best. A frame the outcomes do not show (no outcomes given, or an id a
//! provider served twice) has no score and ranks after every scored frame.

use std::collections::HashMap;

use contextgraph_types::ContextFrame;

use crate::audit::FrameAudit;
use crate::compose::Composition;
use crate::outcome::ProviderOutcome;

/// One audit entry with its rank.
#[derive(Debug, Clone, Copy)]
pub struct RankedFrame<'a> {
    /// 1-based: 1 is the frame the composer values most.
    pub rank: u32,
    /// The score the composer read (clamped to 0..=1), when the frame is known.
    pub score: Option<f32>,
    /// The audit entry.
    pub entry: &'a FrameAudit,
    /// The frame as served, when the outcomes show it (kind, title).
    pub frame: Option<&'a ContextFrame>,
}

/// The audit's frames best first, each with its rank (see the module docs).
pub fn ranked_frames<'a>(
    composition: &'a Composition,
    outcomes: &'a [ProviderOutcome],
) -> Vec<RankedFrame<'a>> {
    let by_id = frames_by_id(outcomes);
    let mut out: Vec<RankedFrame<'a>> = composition
        .audit
        .frames
        .iter()
        .map(|entry| {
            let frame = by_id
                .get(&(
                    entry.frame.provider_id.as_str(),
                    entry.frame.frame_id.as_str(),
                ))
                .copied()
                .flatten();
            RankedFrame {
                rank: 0,
                score: frame.map(|f| composer_score(f.score)),
                entry,
                frame,
            }
        })
        .collect();
    // Stable: equal scores keep the audit's canonical order.
    out.sort_by(|a, b| match (a.score, b.score) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    for (n, r) in out.iter_mut().enumerate() {
        r.rank = u32::try_from(n + 1).unwrap_or(u32::MAX);
    }
    out
}

/// A declared score as the composer reads it.
pub fn composer_score(score: f32) -> f32 {
    if score.is_nan() {
        0.0
    } else {
        score.clamp(0.0, 1.0)
    }
}

/// The frames of `outcomes` by (provider id, frame id); an id served twice
/// maps to `None` (a report cannot tell which copy an entry is about).
pub(crate) fn frames_by_id(
    outcomes: &[ProviderOutcome],
) -> HashMap<(&str, &str), Option<&ContextFrame>> {
    let mut map: HashMap<(&str, &str), Option<&ContextFrame>> = HashMap::new();
    for o in outcomes {
        for f in o.offered_frames() {
            map.entry((o.provider_id.as_str(), f.id.as_str()))
                .and_modify(|slot| *slot = None)
                .or_insert(Some(f));
        }
    }
    map
}
