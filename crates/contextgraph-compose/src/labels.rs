//! Citation labels (F3) that are unique in the prompt.
//!
//! A model cites by label, so two frames must never share one, and a
//! provider must not be able to take another provider's label by copying it.
//! Rule: a label claimed by exactly one frame is used as is; a label claimed
//! by several is given to none of them: each gets `label (provider/id)`, and
//! should that collide with anything (another frame's label, or an earlier
//! qualified one) ` #2`, ` #3`, … is appended. Frames are processed in
//! canonical FrameId order, so the result is a function of the set.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::keys::{Keyed, KeyedMap, Keyer};

/// The label to show for a frame that declared `citation_label` and `title`:
/// the label if non-blank (F3), else the title, else the frame id, else the
/// provider id. Never empty unless all four are.
pub fn raw_label<'a>(
    citation_label: Option<&'a str>,
    title: &'a str,
    frame_id: &'a str,
    provider_id: &'a str,
) -> &'a str {
    [citation_label.unwrap_or(""), title, frame_id]
        .into_iter()
        .find(|s| s.chars().any(|c| !c.is_whitespace()))
        .unwrap_or(provider_id)
}

/// One frame asking for a label.
#[derive(Debug, Clone, Copy)]
pub struct LabelRequest<'a> {
    /// From [`raw_label`], hashed.
    pub raw: Keyed<'a>,
    /// The frame's provider.
    pub provider_id: &'a str,
    /// The frame's id.
    pub frame_id: &'a str,
}

/// Unique labels for `requests`, which must be in canonical FrameId order;
/// `keyer` is the one that hashed the requests' labels.
pub fn disambiguate<'a>(requests: &[LabelRequest<'a>], keyer: &Keyer) -> Vec<Cow<'a, str>> {
    let mut claims: KeyedMap<'a, u32> = KeyedMap::default();
    claims.reserve(requests.len());
    for r in requests {
        *claims.entry(r.raw).or_insert(0) += 1;
    }
    let claimed = |text: &str| {
        claims.contains_key(&Keyed {
            hash: keyer.key(text).hash,
            text,
        })
    };
    let mut qualified: HashSet<String> = HashSet::new();
    requests
        .iter()
        .map(|r| {
            if claims.get(&r.raw).copied() == Some(1) {
                return Cow::Borrowed(r.raw.text);
            }
            let base = format!("{} ({}/{})", r.raw.text, r.provider_id, r.frame_id);
            let mut candidate = base.clone();
            let mut n = 2u64;
            while claimed(&candidate) || qualified.contains(&candidate) {
                candidate = format!("{base} #{n}");
                n += 1;
            }
            qualified.insert(candidate.clone());
            Cow::Owned(candidate)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req<'a>(keyer: &Keyer, raw: &'a str, p: &'a str, id: &'a str) -> LabelRequest<'a> {
        LabelRequest {
            raw: keyer.key(raw),
            provider_id: p,
            frame_id: id,
        }
    }

    #[test]
    fn a_copied_label_is_given_to_nobody() {
        let k = Keyer::new();
        let labels = disambiguate(
            &[
                req(&k, "X", "a", "1"),
                req(&k, "X", "b", "2"),
                req(&k, "Y", "c", "3"),
            ],
            &k,
        );
        assert_eq!(labels, ["X (a/1)", "X (b/2)", "Y"]);
    }

    #[test]
    fn a_pre_claimed_qualified_form_is_skipped() {
        let k = Keyer::new();
        let labels = disambiguate(
            &[
                req(&k, "X", "a", "1"),
                req(&k, "X", "b", "2"),
                req(&k, "X (a/1)", "c", "3"),
            ],
            &k,
        );
        assert_eq!(labels, ["X (a/1) #2", "X (b/2)", "X (a/1)"]);
    }

    #[test]
    fn falls_back_to_title_then_id() {
        assert_eq!(raw_label(Some(" "), "T", "i", "p"), "T");
        assert_eq!(raw_label(None, "", "i", "p"), "i");
        assert_eq!(raw_label(None, "", "", "p"), "p");
    }
}
