//! Packing candidates into an honest answer: the kinds filter (Q1), the
//! `as_of` pin, a deterministic ranking, and greedy budget packing (B1, B4)
//! with a truthful `truncated` / `dropped_estimate`.
//!
//! Each step is also a public call, so a provider that ranks its own way can
//! still reuse the filters, and one that filters in its store can still reuse
//! the packing.

use std::cmp::Ordering;

use contextgraph_types::{ContextFrame, ContextQuery, ContextQueryResult, Timestamp};

use crate::provider::ProviderError;

/// Q1: keep only the frames whose kind the query accepts (all of them when
/// the query names no kinds).
pub fn filter_kinds(mut candidates: Vec<ContextFrame>, query: &ContextQuery) -> Vec<ContextFrame> {
    if !query.kinds.is_empty() {
        candidates.retain(|f| query.accepts_kind(&f.kind));
    }
    candidates
}

/// `as_of`: drop every frame whose `recorded_at` or `valid_from` is after the
/// query's pinned instant, compared as instants (as strings, `…:00Z` sorts
/// after `…:00.5Z`, which is backwards).
///
/// When the query is pinned, a frame whose `recorded_at` or `valid_from`
/// cannot be parsed is dropped too: nothing shows it is not from the future.
/// A query whose own `as_of` does not parse is left unfiltered here; the
/// runner has already answered such a query with `bad_request` (F4).
pub fn filter_as_of(mut candidates: Vec<ContextFrame>, query: &ContextQuery) -> Vec<ContextFrame> {
    let Some(pin) = query
        .as_of
        .as_deref()
        .and_then(|t| Timestamp::parse(t).ok())
    else {
        return candidates;
    };
    let not_after = |value: &Option<String>| match value.as_deref() {
        None => true,
        Some(text) => Timestamp::parse(text).is_ok_and(|t| t <= pin),
    };
    candidates.retain(|f| not_after(&f.recorded_at) && not_after(&f.valid_from));
    candidates
}

/// E1 from the provider's side: `bad_request` when the query carries a
/// vector whose length contradicts the dimension of `fingerprint` (the
/// provider's `embeddings_fingerprint`), or a vector at all when the
/// provider declared no embedding space. The runner calls this before
/// `query`; a provider serving several spaces may call it itself.
pub fn check_embedding(
    query: &ContextQuery,
    fingerprint: Option<&str>,
) -> Result<(), ProviderError> {
    match query.embedding_violation(fingerprint) {
        None => Ok(()),
        Some(v) => Err(ProviderError::bad_request(format!(
            "{v}; send an embedding only when your fingerprint equals this provider's exactly, or send none"
        ))),
    }
}

/// The packing order: score descending (NaN last), then frame id, then
/// content digest, ascending. Total and independent of the input order, so
/// the same candidates always pack to the same answer.
pub fn rank(frames: &mut [ContextFrame]) {
    frames.sort_by(compare_rank);
}

fn compare_rank(a: &ContextFrame, b: &ContextFrame) -> Ordering {
    let score = |f: &ContextFrame| {
        if f.score.is_nan() {
            f32::NEG_INFINITY
        } else {
            f.score
        }
    };
    score(b)
        .total_cmp(&score(a))
        .then_with(|| a.id.cmp(&b.id))
        .then_with(|| a.content_digest.cmp(&b.content_digest))
}

/// Build the answer to `query` from `candidates`:
///
/// 1. [`filter_kinds`] (Q1) and [`filter_as_of`]: frames failing them are not
///    eligible and are not counted as dropped;
/// 2. [`rank`]: score descending, ties by id (deterministic);
/// 3. greedy packing: walk the ranking and take each frame whose declared
///    `token_cost` fits what is left of `max_tokens` (B1), skipping one that
///    does not and continuing with smaller ones, until `max_frames` (B4) are
///    taken;
/// 4. `truncated` is true exactly when an eligible candidate was left out, and
///    `dropped_estimate` says how many (omitted when none).
///
/// Costs are taken as declared, so build candidates with
/// [`FrameBuilder`](crate::FrameBuilder), whose costs are computed (B3).
pub fn pack(candidates: Vec<ContextFrame>, query: &ContextQuery) -> ContextQueryResult {
    let mut eligible = filter_as_of(filter_kinds(candidates, query), query);
    rank(&mut eligible);
    let max_frames = usize::try_from(query.max_frames).unwrap_or(usize::MAX);
    let mut remaining = u64::from(query.max_tokens);
    let mut frames = Vec::with_capacity(eligible.len().min(max_frames));
    let mut dropped: u64 = 0;
    for frame in eligible {
        let cost = u64::from(frame.token_cost);
        if frames.len() < max_frames && cost <= remaining {
            remaining -= cost;
            frames.push(frame);
        } else {
            dropped += 1;
        }
    }
    ContextQueryResult {
        frames,
        truncated: dropped > 0,
        dropped_estimate: (dropped > 0).then(|| u32::try_from(dropped).unwrap_or(u32::MAX)),
    }
}
