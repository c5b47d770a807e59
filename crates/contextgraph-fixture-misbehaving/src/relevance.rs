//! Scoring: term overlap with the query, an optional embedding similarity in
//! the declared space (E1), and the anchor rule (G3, G4).
//!
//! Scores are deterministic (no clock, no randomness, no hash-map order), so
//! the same query always gets the same answer, and they stay in [0, 1] (F1).

use std::collections::BTreeSet;

use contextgraph_types::{ContextFrame, ContextQuery};

/// The embedding space the provider declares: a toy 4-dimensional,
/// L2-normalised bag-of-words space. Small on purpose: the point is the E1
/// dimension check and a visible effect on ranking, not retrieval quality.
pub const EMBEDDINGS_FINGERPRINT: &str = "test-embed/4/l2";

/// The dimension of [`EMBEDDINGS_FINGERPRINT`].
pub const EMBEDDING_DIMENSIONS: usize = 4;

/// Most distinct query terms considered: a peer controls the goal text, and
/// term matching must stay cheap whatever it sends.
const MAX_QUERY_TERMS: usize = 256;

/// How anchored frames are ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorPolicy {
    /// G4: anchored frames take the upper half of the score range, so they
    /// rank strictly above every unanchored frame.
    Boost,
    /// `ignored-anchors`: anchored frames take the lower half instead.
    Bury,
}

/// G4: a frame is anchored when its `uri` equals an anchor (0 hops) or one of
/// its relations' `target_uri` does (1 hop). Exact string equality, as the
/// rule says: a host's notion of "anchored" must match the provider's.
pub fn is_anchored(frame: &ContextFrame, anchors: &[String]) -> bool {
    let hit = |uri: &str| anchors.iter().any(|a| a == uri);
    frame.uri.as_deref().is_some_and(hit) || frame.relations.iter().any(|r| hit(&r.target_uri))
}

/// Lower-cased alphanumeric words of at least two characters.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
}

/// The distinct terms of a query's match text, at most `MAX_QUERY_TERMS` (256).
pub fn query_terms(query: &ContextQuery) -> BTreeSet<String> {
    let mut terms = BTreeSet::new();
    for w in words(query.match_text()) {
        if terms.len() >= MAX_QUERY_TERMS {
            break;
        }
        terms.insert(w);
    }
    terms
}

/// A deterministic embedding of `text` in the declared space: word counts
/// hashed (FNV-1a) into four buckets, L2-normalised. Text without words maps
/// to the uniform unit vector so every vector has length 1.
pub fn embed(text: &str) -> Vec<f32> {
    let mut v = [0f32; EMBEDDING_DIMENSIONS];
    for w in words(text) {
        let mut h: u32 = 0x811c_9dc5;
        for b in w.bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        v[(h as usize) % EMBEDDING_DIMENSIONS] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter().map(|x| x / norm).collect()
    } else {
        vec![0.5; EMBEDDING_DIMENSIONS]
    }
}

/// Cosine similarity of two vectors mapped into [0, 1]; `None` when the
/// lengths differ or either vector is zero (nothing meaningful to compare).
fn similarity01(a: &[f32], b: &[f32]) -> Option<f32> {
    if a.len() != b.len() {
        return None;
    }
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(na > 0.0 && nb > 0.0) {
        return None;
    }
    let cos = (dot / (na * nb)).clamp(-1.0, 1.0);
    Some((cos + 1.0) / 2.0)
}

/// Set each frame's `score` for `query`:
/// 1. relevance = share of the query's terms found in title + content,
///    with a small bonus for terms in the title;
/// 2. averaged with the embedding similarity when the query carries a vector
///    of the declared dimension;
/// 3. with anchors, anchored frames get `0.51 + 0.49·r` and the others `0.5·r`
///    (swapped under [`AnchorPolicy::Bury`]); without anchors the score is `r`.
///
/// Scores are rounded to a thousandth so they print briefly on the wire.
pub fn score_all(frames: &mut [ContextFrame], query: &ContextQuery, policy: AnchorPolicy) {
    let terms = query_terms(query);
    let vector = query
        .embedding
        .as_deref()
        .filter(|v| v.len() == EMBEDDING_DIMENSIONS);
    for frame in frames {
        let mut r = if terms.is_empty() {
            0.0
        } else {
            let in_title: BTreeSet<String> = words(&frame.title).collect();
            let mut anywhere = in_title.clone();
            if let Some(c) = &frame.content {
                anywhere.extend(words(c));
            }
            let share = |set: &BTreeSet<String>| {
                terms.iter().filter(|t| set.contains(*t)).count() as f32 / terms.len() as f32
            };
            0.85 * share(&anywhere) + 0.15 * share(&in_title)
        };
        let frame_vector = frame.embedding.as_ref().and_then(|e| e.vector.as_deref());
        if let (Some(q), Some(f)) = (vector, frame_vector) {
            if let Some(s) = similarity01(q, f) {
                r = (r + s) / 2.0;
            }
        }
        let r = r.clamp(0.0, 1.0);
        let score = if query.anchors.is_empty() {
            r
        } else {
            let anchored = is_anchored(frame, &query.anchors);
            let upper = match policy {
                AnchorPolicy::Boost => anchored,
                AnchorPolicy::Bury => !anchored,
            };
            // Disjoint halves: the least relevant upper frame still
            // outranks the most relevant lower one.
            if upper {
                0.51 + 0.49 * r
            } else {
                0.5 * r
            }
        };
        frame.score = ((score * 1000.0).round() / 1000.0).clamp(0.0, 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_types::FrameKind;

    #[test]
    fn embeddings_are_unit_length_and_deterministic() {
        for text in [
            "",
            "retry policy",
            "max_attempts bounds the number of tries",
        ] {
            let v = embed(text);
            assert_eq!(v.len(), EMBEDDING_DIMENSIONS);
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{text}: {norm}");
            assert_eq!(v, embed(text));
        }
    }

    #[test]
    fn anchored_frames_outrank_unanchored_ones_under_boost_and_not_under_bury() {
        let mut anchored = ContextFrame::new("a", FrameKind::Doc, "unrelated", "nothing here");
        anchored.uri = Some("file:///x".into());
        let unanchored = ContextFrame::new("b", FrameKind::Doc, "retry", "retry retry");
        let mut query = ContextQuery::new("retry", 5, 100);
        query.anchors = vec!["file:///x".into()];
        let mut frames = vec![anchored, unanchored];
        score_all(&mut frames, &query, AnchorPolicy::Boost);
        assert!(frames[0].score > frames[1].score, "{frames:?}");
        score_all(&mut frames, &query, AnchorPolicy::Bury);
        assert!(frames[0].score < frames[1].score, "{frames:?}");
    }
}
