//! Bounded work per request: the most a peer may ask of a provider in one
//! query or verify, checked before any work is done.
//!
//! The wire allows a goal as long as a 16 MiB line and lists of any length;
//! a provider that scored every word of such a goal, or every anchor of a
//! million-entry list, would spend minutes and gigabytes on one request
//! (N5 of the second trust-boundary round: 64,000 distinct words took 6.6 s
//! in the workspace provider). Every provider built on the SDK answers a
//! request over these limits with `bad_request` and a sentence naming the
//! limit (the SDK runner checks [`check_query`] and [`check_verify`]), and
//! the built-in providers check again in-process. The values are listed in
//! `docs/requirements.md` ("Bounded work per request").
//!
//! Each check is O(1) or linear in what it inspects, and stops at the first
//! limit crossed, so an oversized request costs no more than reading it.

use std::collections::HashSet;

use crate::query::ContextQuery;
use crate::verify::VerifyRequest;

/// Most bytes of `goal` (and, separately, of `query_text`): a page of
/// prose or a pasted stack trace, not a document.
pub const MAX_GOAL_BYTES: usize = 32 * 1024;

/// Most distinct words in `goal` or `query_text` (case-insensitive, split
/// on anything not a letter or digit).
pub const MAX_GOAL_TERMS: usize = 512;

/// Most `anchors` in one query.
pub const MAX_ANCHORS: usize = 256;

/// Most bytes of one anchor.
pub const MAX_ANCHOR_BYTES: usize = 4 * 1024;

/// Most entries in `kinds`.
pub const MAX_KINDS: usize = 32;

/// Most entries in `representation_preferences`.
pub const MAX_REPRESENTATIONS: usize = 16;

/// Largest `max_frames`.
pub const MAX_FRAMES: u32 = 1000;

/// Most identities in one verify request (hosts split larger sets).
pub const MAX_VERIFY_FRAMES: usize = 1024;

/// The first limit `query` crosses, as a sentence for `bad_request`.
pub fn check_query(query: &ContextQuery) -> Result<(), String> {
    check_text("goal", &query.goal)?;
    if let Some(text) = &query.query_text {
        check_text("query_text", text)?;
    }
    if query.anchors.len() > MAX_ANCHORS {
        return Err(format!(
            "anchors has {} entries, over the limit of {MAX_ANCHORS}; send the files in focus, not the whole tree",
            query.anchors.len()
        ));
    }
    if let Some(long) = query.anchors.iter().find(|a| a.len() > MAX_ANCHOR_BYTES) {
        return Err(format!(
            "an anchor is {} bytes, over the limit of {MAX_ANCHOR_BYTES}; an anchor is a URI or a path",
            long.len()
        ));
    }
    if query.kinds.len() > MAX_KINDS {
        return Err(format!(
            "kinds has {} entries, over the limit of {MAX_KINDS}; name each kind once",
            query.kinds.len()
        ));
    }
    if query.representation_preferences.len() > MAX_REPRESENTATIONS {
        return Err(format!(
            "representation_preferences has {} entries, over the limit of {MAX_REPRESENTATIONS}",
            query.representation_preferences.len()
        ));
    }
    if query.max_frames > MAX_FRAMES {
        return Err(format!(
            "max_frames is {}, over the limit of {MAX_FRAMES}; ask for fewer frames",
            query.max_frames
        ));
    }
    Ok(())
}

/// The limit `request` crosses, as a sentence for `bad_request`.
pub fn check_verify(request: &VerifyRequest) -> Result<(), String> {
    if request.frames.len() > MAX_VERIFY_FRAMES {
        return Err(format!(
            "verify names {} frames, over the limit of {MAX_VERIFY_FRAMES} per request; split it into batches",
            request.frames.len()
        ));
    }
    Ok(())
}

/// `field`'s bytes, then its distinct words, each against its limit.
fn check_text(field: &str, text: &str) -> Result<(), String> {
    if text.len() > MAX_GOAL_BYTES {
        return Err(format!(
            "{field} is {} bytes, over the limit of {MAX_GOAL_BYTES}; say what the context is for in a few sentences",
            text.len()
        ));
    }
    let mut seen: HashSet<String> = HashSet::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if seen.contains(word) {
            continue;
        }
        seen.insert(word.to_lowercase());
        if seen.len() > MAX_GOAL_TERMS {
            return Err(format!(
                "{field} has over {MAX_GOAL_TERMS} distinct words, over the limit; say what the context is for in a few sentences"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FrameId, FrameKind};

    fn query(goal: &str) -> ContextQuery {
        ContextQuery::new(goal, 10, 1000)
    }

    #[test]
    fn an_ordinary_query_is_within_every_limit() {
        let mut q = query("how is the config loaded?");
        q.anchors = vec!["src/config.rs".into(); MAX_ANCHORS];
        q.kinds = vec![FrameKind::Symbol; MAX_KINDS];
        q.max_frames = MAX_FRAMES;
        assert_eq!(check_query(&q), Ok(()));
        let at_limit = "x".repeat(MAX_GOAL_BYTES);
        assert_eq!(check_query(&query(&at_limit)), Ok(()));
        let words: Vec<String> = (0..MAX_GOAL_TERMS).map(|i| format!("w{i}")).collect();
        assert_eq!(check_query(&query(&words.join(" "))), Ok(()));
    }

    #[test]
    fn each_limit_is_answered_with_a_sentence_naming_it() {
        let over_bytes = query(&"x".repeat(MAX_GOAL_BYTES + 1));
        assert!(check_query(&over_bytes)
            .unwrap_err()
            .contains("goal is 32769 bytes"));
        let mut text = query("fine");
        text.query_text = Some("y".repeat(MAX_GOAL_BYTES + 1));
        assert!(check_query(&text).unwrap_err().starts_with("query_text is"));
        let words: Vec<String> = (0..=MAX_GOAL_TERMS).map(|i| format!("w{i}")).collect();
        assert!(check_query(&query(&words.join(" ")))
            .unwrap_err()
            .contains("distinct words"));
        // Repeating one word, in any case, is one term.
        assert_eq!(check_query(&query(&"Retry retry ".repeat(1000))), Ok(()));
        let mut q = query("a");
        q.anchors = vec!["a".into(); MAX_ANCHORS + 1];
        assert!(check_query(&q).unwrap_err().starts_with("anchors has 257"));
        let mut q = query("a");
        q.anchors = vec!["a".repeat(MAX_ANCHOR_BYTES + 1)];
        assert!(check_query(&q).unwrap_err().starts_with("an anchor is"));
        let mut q = query("a");
        q.kinds = vec![FrameKind::Doc; MAX_KINDS + 1];
        assert!(check_query(&q).unwrap_err().starts_with("kinds has"));
        let mut q = query("a");
        q.max_frames = MAX_FRAMES + 1;
        assert!(check_query(&q)
            .unwrap_err()
            .starts_with("max_frames is 1001"));
        let many = VerifyRequest {
            frames: vec![FrameId::new("p", "x", None); MAX_VERIFY_FRAMES + 1],
        };
        assert!(check_verify(&many)
            .unwrap_err()
            .contains("split it into batches"));
        let ok = VerifyRequest {
            frames: vec![FrameId::new("p", "x", None); MAX_VERIFY_FRAMES],
        };
        assert_eq!(check_verify(&ok), Ok(()));
    }
}
