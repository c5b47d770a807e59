//! The answer-level misbehaviours: each takes the honest packing of the
//! scored candidates and breaks exactly one rule in it, keeping every other
//! rule intact (budget B1, frame count B4, kinds Q1, `as_of`) so that a
//! checker sees one violation and one only.
//!
//! "One frame" is the top-ranked frame: the one every host keeps, so the
//! fault cannot hide in what a host trims.

use contextgraph_provider_sdk::{filter_as_of, pack, rank, sha256_digest, FrameBuilder};
use contextgraph_types::{
    ContextFrame, ContextQuery, ContextQueryResult, FrameKind, LineRange, Timestamp,
};

use crate::corpus::derivation;
use crate::mode::Mode;
use crate::relevance::is_anchored;

/// Tokens `lying-cost` adds to one frame's declared cost (B3 wants exact).
pub const COST_LIE: u32 = 16;

/// What `bad-score` scores one frame (F1 wants [0, 1]).
pub const BAD_SCORE: f32 = 1.5;

/// What `bad-timestamp` records (F4 wants `T` and `Z`).
pub const BAD_TIMESTAMP: &str = "2026-07-20 18:00:00";

/// What `malformed-digest` declares (D1 wants 64 hex digits).
pub const MALFORMED_DIGEST: &str = "sha256:abc";

/// How many frames past `max_frames` `frame-flood` sends.
pub const FLOOD_EXCESS: u32 = 50;

/// Most frames `frame-flood` sends, whatever `max_frames` says: the flood
/// must break B4, not exhaust the host's memory or line cap.
pub const FLOOD_CAP: u64 = 10_050;

/// Largest filler `budget-overrun` writes, in budget tokens (4 MiB of
/// content). Budgets above it cannot be overrun within any line cap.
pub const MAX_FILLER_TOKENS: u64 = 1024 * 1024;

/// The kind `unknown-kind` serves (U2: outside the closed set).
pub const HOLOGRAM_KIND: &str = "hologram";

/// The id of `unknown-kind`'s hologram frame.
pub const HOLOGRAM_ID: &str = "hologram:retry-visualisation";

/// The answer to `query` in `mode`, from the scored `candidates`.
pub fn answer(
    mode: Mode,
    query: &ContextQuery,
    candidates: Vec<ContextFrame>,
    provider_name: &str,
) -> ContextQueryResult {
    match mode {
        Mode::LyingCost => lying_cost(query, candidates),
        Mode::FrameFlood => flood(query, pack(candidates, query), provider_name),
        Mode::BudgetOverrun => overrun(query, pack(candidates, query), provider_name),
        Mode::IgnoredKinds => ignored_kinds(query, candidates),
        Mode::IgnoredAsOf => ignored_as_of(query, candidates),
        Mode::UnknownKind => with_hologram(query, candidates),
        Mode::AnchoredLowScore => {
            let mut result = pack(candidates, query);
            score_anchored_low(&mut result, query);
            result
        }
        _ => {
            let mut result = pack(candidates, query);
            tamper_top_frame(mode, &mut result);
            result
        }
    }
}

/// The per-frame lies, applied to the top-ranked frame (for `stale-digest`,
/// the top-ranked frame that has file provenance, preferring one whose range
/// claims more lines than its content holds: under `range-past-end` the
/// stale digest then sits exactly where a checker that stops at a range past
/// the end would never look).
fn tamper_top_frame(mode: Mode, result: &mut ContextQueryResult) {
    let target = match mode {
        Mode::StaleDigest => {
            let index = result
                .frames
                .iter()
                .position(claims_past_its_content)
                .or_else(|| {
                    result
                        .frames
                        .iter()
                        .position(|f| f.file_provenance().next().is_some())
                });
            index.and_then(|i| result.frames.get_mut(i))
        }
        Mode::UnderReportedCost => result.frames.iter_mut().find(|f| f.token_cost > 0),
        _ => result.frames.first_mut(),
    };
    let Some(frame) = target else {
        return;
    };
    let content = frame.content.clone().unwrap_or_default();
    match mode {
        Mode::UnderReportedCost => frame.token_cost /= 2,
        Mode::BadScore => frame.score = BAD_SCORE,
        Mode::EmptyCitation => frame.citation_label = Some(String::new()),
        Mode::EmptyTitle => frame.title = String::new(),
        Mode::BadTimestamp => frame.recorded_at = Some(BAD_TIMESTAMP.to_owned()),
        Mode::MalformedDigest => frame.content_digest = Some(MALFORMED_DIGEST.to_owned()),
        Mode::DigestMismatch => {
            frame.content_digest = Some(sha256_digest(format!("mismatch:{content}").as_bytes()));
        }
        Mode::StaleDigest => {
            if let Some(p) = frame.provenance.iter_mut().find(|p| p.is_file()) {
                p.digest = Some(sha256_digest(format!("stale:{content}").as_bytes()));
            }
        }
        _ => {}
    }
}

/// `anchored-low-score`: keep the order (anchored frames first), but scale
/// the anchored frames' scores below every unanchored one's, so a checker
/// that compares scores instead of list positions sees "anchored scored
/// lower". Nothing changes without anchors or without an unanchored frame.
fn score_anchored_low(result: &mut ContextQueryResult, query: &ContextQuery) {
    let lowest_unanchored = result
        .frames
        .iter()
        .filter(|f| !is_anchored(f, &query.anchors))
        .map(|f| f.score)
        .reduce(f32::min);
    let Some(lowest) = lowest_unanchored else {
        return;
    };
    for frame in result
        .frames
        .iter_mut()
        .filter(|f| is_anchored(f, &query.anchors))
    {
        // In [0, lowest / 2]: still a valid score (F1), strictly lower.
        frame.score *= lowest / 2.0;
    }
}

/// Whether a file provenance range of `frame` names more lines than its
/// content has (the `range-past-end` baseline's doing).
fn claims_past_its_content(frame: &ContextFrame) -> bool {
    let lines = frame
        .content
        .as_deref()
        .map_or(0, |c| c.split_inclusive('\n').count());
    frame.file_provenance().any(|p| {
        p.range
            .as_deref()
            .and_then(LineRange::parse)
            .is_some_and(|r| r.len() as usize > lines)
    })
}

/// B3, overstated: pack as if the budget were [`COST_LIE`] smaller, then
/// declare that much more on the top frame, so Σ declared cost still fits
/// `max_tokens` (B1 holds; only B3 breaks).
fn lying_cost(query: &ContextQuery, candidates: Vec<ContextFrame>) -> ContextQueryResult {
    let mut narrowed = query.clone();
    narrowed.max_tokens = query.max_tokens.saturating_sub(COST_LIE);
    let mut result = pack(candidates, &narrowed);
    if let Some(frame) = result.frames.first_mut() {
        frame.token_cost += COST_LIE;
    }
    result
}

/// B4: pad the honest answer with empty (cost 0) frames up to
/// `max_frames + 50`, so B1 and every frame's own validity still hold.
fn flood(query: &ContextQuery, mut result: ContextQueryResult, by: &str) -> ContextQueryResult {
    let target = (u64::from(query.max_frames) + u64::from(FLOOD_EXCESS)).min(FLOOD_CAP);
    let kind = answer_kind(query);
    let mut n = 0u64;
    while (result.frames.len() as u64) < target {
        n += 1;
        result.frames.push(synthetic(
            format!("flood:{n:05}"),
            kind.clone(),
            format!("Flood frame {n}"),
            String::new(),
            by,
        ));
    }
    result
}

/// B1: add an honestly priced filler frame whose cost takes the total one
/// token past `max_tokens` (replacing the last frame when `max_frames` is
/// already reached, so B4 still holds).
fn overrun(query: &ContextQuery, mut result: ContextQueryResult, by: &str) -> ContextQueryResult {
    let max_frames = usize::try_from(query.max_frames).unwrap_or(usize::MAX);
    if max_frames == 0 {
        return result;
    }
    let mut dropped = 0;
    while result.frames.len() >= max_frames {
        result.frames.pop();
        dropped += 1;
    }
    note_dropped(&mut result, dropped);
    let need = (u64::from(query.max_tokens) + 1)
        .saturating_sub(result.total_token_cost())
        .clamp(1, MAX_FILLER_TOKENS);
    let filler = filler_text(need as usize * 4);
    result.frames.push(synthetic(
        "overrun:filler".to_owned(),
        answer_kind(query),
        "Budget overrun filler".to_owned(),
        filler,
        by,
    ));
    result
}

/// Q1: put the best frame of an unrequested kind first (within budget). When
/// every kind this provider has was requested, the top frame is relabelled
/// with a kind that was not.
fn ignored_kinds(query: &ContextQuery, candidates: Vec<ContextFrame>) -> ContextQueryResult {
    if query.kinds.is_empty() {
        return pack(candidates, query);
    }
    let (wanted, foreign): (Vec<_>, Vec<_>) = candidates
        .into_iter()
        .partition(|f| query.accepts_kind(&f.kind));
    let mut foreign = filter_as_of(foreign, query);
    rank(&mut foreign);
    let mut result = pack(wanted, query);
    match foreign.into_iter().next() {
        Some(frame) => {
            inject(&mut result, frame, query);
        }
        None => {
            let unrequested = FrameKind::KNOWN
                .iter()
                .find(|k| !query.kinds.contains(k))
                .cloned()
                .unwrap_or_else(|| FrameKind::Other(HOLOGRAM_KIND.to_owned()));
            if let Some(frame) = result.frames.first_mut() {
                frame.kind = unrequested;
            }
        }
    }
    result
}

/// `as_of`: put the best frame recorded after the pin first (within
/// budget). When nothing is newer than the pin, the top frame's
/// `recorded_at` is moved to a day after it.
fn ignored_as_of(query: &ContextQuery, candidates: Vec<ContextFrame>) -> ContextQueryResult {
    let Some(pin) = query
        .as_of
        .as_deref()
        .and_then(|t| Timestamp::parse(t).ok())
    else {
        return pack(candidates, query);
    };
    let after = |f: &ContextFrame| {
        f.recorded_at
            .as_deref()
            .and_then(|t| Timestamp::parse(t).ok())
            .is_some_and(|t| t > pin)
    };
    let mut newer: Vec<ContextFrame> = candidates
        .iter()
        .filter(|f| query.accepts_kind(&f.kind) && after(f))
        .cloned()
        .collect();
    rank(&mut newer);
    let mut result = pack(candidates, query);
    match newer.into_iter().next() {
        Some(frame) => {
            inject(&mut result, frame, query);
        }
        None => {
            if let Some(frame) = result.frames.first_mut() {
                let day = std::time::Duration::from_secs(86_400);
                frame.recorded_at = Some(pin.add(day).to_wire());
            }
        }
    }
    result
}

/// U2: the hologram frame is a corpus candidate in this mode; make sure it
/// is in the answer when the query accepts any kind. (With a kinds filter
/// it would also break Q1, so it is left out then: one fault at a time.)
fn with_hologram(query: &ContextQuery, candidates: Vec<ContextFrame>) -> ContextQueryResult {
    let hologram = candidates.iter().find(|f| f.id == HOLOGRAM_ID).cloned();
    let mut result = pack(candidates, query);
    if let Some(frame) = hologram {
        if query.kinds.is_empty() && !result.frames.iter().any(|f| f.id == HOLOGRAM_ID) {
            inject(&mut result, frame, query);
        }
    }
    result
}

/// The hologram frame `unknown-kind` adds to the corpus: honest in every
/// respect except its kind.
pub fn hologram_frame() -> ContextFrame {
    FrameBuilder::new(
        HOLOGRAM_ID,
        FrameKind::Other(HOLOGRAM_KIND.to_owned()),
        "Retry backoff, as a hologram",
        "A rendering of the retry backoff curve: delays of 100, 200, 400 and 800 ms.\n",
    )
    .citation_label("hologram: retry backoff")
    .recorded_at(Timestamp::from_unix(1_735_689_600, 0))
    .provenance(derivation("hologram-render"))
    .build()
}

/// Put `frame` first, evicting the lowest-ranked frames until it fits both
/// `max_frames` (B4) and `max_tokens` (B1); `false` when it can never fit.
fn inject(result: &mut ContextQueryResult, frame: ContextFrame, query: &ContextQuery) -> bool {
    let max_frames = usize::try_from(query.max_frames).unwrap_or(usize::MAX);
    let cost = u64::from(frame.token_cost);
    let max_tokens = u64::from(query.max_tokens);
    if max_frames == 0 || cost > max_tokens {
        return false;
    }
    let mut dropped = 0;
    while result.frames.len() >= max_frames || result.total_token_cost() + cost > max_tokens {
        result.frames.pop();
        dropped += 1;
    }
    note_dropped(result, dropped);
    result.frames.insert(0, frame);
    true
}

/// Keep `truncated`/`dropped_estimate` honest after evicting `dropped` frames.
fn note_dropped(result: &mut ContextQueryResult, dropped: u32) {
    if dropped > 0 {
        let total = result.dropped_estimate.unwrap_or(0).saturating_add(dropped);
        result.truncated = true;
        result.dropped_estimate = Some(total);
    }
}

/// The kind for synthetic frames: one the query asked for (so Q1 holds),
/// preferring one this provider declares.
fn answer_kind(query: &ContextQuery) -> FrameKind {
    let ours = [FrameKind::Doc, FrameKind::Snippet, FrameKind::Graph];
    query
        .kinds
        .iter()
        .find(|k| ours.contains(k))
        .or_else(|| query.kinds.first())
        .cloned()
        .unwrap_or(FrameKind::Doc)
}

/// A frame made up on the spot, honest in cost, digest, title and label.
fn synthetic(
    id: String,
    kind: FrameKind,
    title: String,
    content: String,
    by: &str,
) -> ContextFrame {
    let mut provenance = derivation("synthetic");
    provenance.by = Some(by.to_owned());
    FrameBuilder::new(id, kind, title, content)
        .provenance(provenance)
        .build()
}

/// Exactly `len` bytes of ASCII filler text.
fn filler_text(len: usize) -> String {
    const PATTERN: &str = "budget overrun filler. ";
    let mut text = PATTERN.repeat(len / PATTERN.len() + 1);
    text.truncate(len);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(id: &str, cost_bytes: usize, score: f32) -> ContextFrame {
        let mut f = FrameBuilder::new(id, FrameKind::Doc, id, "x".repeat(cost_bytes)).build();
        f.score = score;
        f
    }

    #[test]
    fn inject_evicts_the_lowest_ranked_until_the_frame_fits() {
        let query = ContextQuery::new("g", 2, 10);
        let mut result = pack(vec![frame("a", 16, 0.9), frame("b", 16, 0.5)], &query);
        assert_eq!(result.frames.len(), 2);
        assert!(inject(&mut result, frame("new", 20, 0.1), &query));
        let ids: Vec<_> = result.frames.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["new", "a"]);
        assert!(result.truncated);
        assert_eq!(result.dropped_estimate, Some(1));
        assert!(result.respects_budget(10) && result.respects_frame_limit(2));
        assert!(!inject(&mut result, frame("huge", 44, 0.1), &query));
    }

    #[test]
    fn filler_is_exactly_as_long_as_asked() {
        for len in [0, 1, 23, 24, 4096] {
            assert_eq!(filler_text(len).len(), len);
        }
    }
}
