//! Relevance of MCP resources to a goal.
//!
//! MCP resources carry no relevance signal of their own, so the bridge
//! ranks them itself, in two passes that keep the number of reads bounded:
//! metadata first (name, title, description, URI) to choose which resources
//! are worth reading, then the content of those read. Both passes use the
//! same goal terms, so the order is deterministic for a given listing.

use rmcp::model::Resource;

/// Most goal terms used (a goal is a sentence, not a document).
pub const MAX_TERMS: usize = 32;

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "in",
    "is", "it", "of", "on", "or", "the", "this", "to", "what", "when", "where", "which", "who",
    "why", "with",
];

/// The distinct lowercase terms of `text` worth matching: alphanumeric runs
/// of at least two characters that are not stop words, in first-seen order.
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
    {
        let word = word.to_lowercase();
        if !STOP_WORDS.contains(&word.as_str()) && !out.contains(&word) {
            out.push(word);
            if out.len() == MAX_TERMS {
                break;
            }
        }
    }
    out
}

/// Fraction of `terms` that occur in the resource's name, title,
/// description or URI, in [0, 1].
pub fn metadata_score(resource: &Resource, terms: &[String]) -> f32 {
    if terms.is_empty() {
        return 0.0;
    }
    let haystack = format!(
        "{} {} {} {}",
        resource.name,
        resource.title.as_deref().unwrap_or(""),
        resource.description.as_deref().unwrap_or(""),
        resource.uri
    )
    .to_lowercase();
    let hits = terms
        .iter()
        .filter(|t| haystack.contains(t.as_str()))
        .count();
    hits as f32 / terms.len() as f32
}

/// Term coverage of `content`, in [0, 1]: each present term contributes
/// one half for being there and up to another half for repetition
/// (`ln(1 + tf) / ln(1 + SATURATION)`, capped), averaged over the terms, so
/// covering every term matters more than repeating one.
pub fn content_score(content: &str, terms: &[String]) -> f32 {
    const SATURATION: f32 = 5.0;
    if terms.is_empty() {
        return 0.0;
    }
    let lower = content.to_lowercase();
    let total: f32 = terms
        .iter()
        .map(|t| {
            let tf = lower.matches(t.as_str()).count() as f32;
            if tf == 0.0 {
                0.0
            } else {
                0.5 + 0.5 * ((1.0 + tf).ln() / (1.0 + SATURATION).ln()).min(1.0)
            }
        })
        .sum();
    total / terms.len() as f32
}

/// Whether `uri` is one of the query's anchors (0 hops, G4's definition).
pub fn anchored(uri: &str, anchors: &[String]) -> bool {
    anchors.iter().any(|a| a == uri)
}

/// The final score of a read resource, in [0, 1]: metadata and content
/// coverage blended, plus a fixed boost for anchored resources so they rank
/// above unanchored ones of similar coverage.
pub fn score(metadata: f32, content: f32, is_anchored: bool) -> f32 {
    let base = 0.35 * metadata + 0.65 * content;
    let boosted = if is_anchored {
        0.5 + 0.5 * base
    } else {
        0.5 * base
    };
    boosted.clamp(0.0, 1.0)
}

/// Indices of the resources to read, best first: anchored ones, then by
/// metadata score, ties by URI; at most `max`.
pub fn pick(
    resources: &[Resource],
    terms: &[String],
    anchors: &[String],
    max: usize,
) -> Vec<usize> {
    let mut order: Vec<(usize, bool, f32)> = resources
        .iter()
        .enumerate()
        .map(|(i, r)| (i, anchored(&r.uri, anchors), metadata_score(r, terms)))
        .collect();
    order.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| b.2.total_cmp(&a.2))
            .then_with(|| resources[a.0].uri.cmp(&resources[b.0].uri))
    });
    order.into_iter().take(max).map(|(i, _, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_drop_stop_words_short_words_and_duplicates() {
        assert_eq!(
            terms("How does the Retry loop retry? a b x2"),
            vec!["retry", "loop", "x2"]
        );
    }

    #[test]
    fn content_covering_more_terms_scores_higher() {
        let t = terms("retry backoff");
        let both = content_score("retry with backoff", &t);
        let one = content_score("retry retry retry", &t);
        assert!(both > one, "{both} vs {one}");
        assert_eq!(content_score("nothing relevant", &t), 0.0);
    }

    #[test]
    fn anchored_resources_outrank_unanchored_ones_of_equal_coverage() {
        assert!(score(0.2, 0.2, true) > score(0.2, 0.2, false));
        assert!(score(0.0, 0.0, true) > score(1.0, 1.0, false) - 0.01);
        for s in [score(1.0, 1.0, true), score(0.0, 0.0, false)] {
            assert!((0.0..=1.0).contains(&s));
        }
    }

    #[test]
    fn pick_prefers_anchors_then_metadata_and_is_bounded() {
        let rs = vec![
            Resource::new("memo://b", "unrelated"),
            Resource::new("memo://a", "retry policy"),
            Resource::new("memo://c", "anchor me"),
        ];
        let picked = pick(&rs, &terms("retry"), &["memo://c".to_owned()], 2);
        assert_eq!(picked, vec![2, 1]);
    }
}
