//! Citation labels across turns: whether a held frame's label is still
//! the one it would be given, a free label for a frame, and a held frame
//! found relabelled (its lines moved, its bytes the same).

use std::collections::BTreeMap;

use contextgraph_types::ContextFrame;

use super::{HeldFrame, Key};

/// A held frame, unchanged (same digest, confirmed `valid`), that its
/// provider now cites differently.
pub(super) struct Moved<'a> {
    pub held: &'a HeldFrame,
    /// The label it is cited by now (made unique before use).
    pub label: String,
    pub provenance: Vec<contextgraph_types::Provenance>,
    /// Part of this goal's evidence (counted as reused), or a held frame
    /// outside it that a provider served this turn under a new label.
    pub in_answer: bool,
}

/// The label `frame` of `provider` is given now, before it is made unique:
/// the one the composition gives it ([`contextgraph_compose::raw_label`]).
pub(super) fn current_label<'a>(frame: &'a ContextFrame, provider: &'a str) -> &'a str {
    contextgraph_compose::raw_label(
        frame.citation_label.as_deref(),
        &frame.title,
        &frame.id,
        provider,
    )
}

/// `h` as moved, when `frame` (its provider's current version of it) has
/// the same bytes under another label; `None` when the label is the same
/// or the bytes differ (then `verify`, not the label, decides).
pub(super) fn relabelled<'a>(
    h: &'a HeldFrame,
    frame: &ContextFrame,
    provider: &str,
) -> Option<Moved<'a>> {
    if h.frame.content_digest.is_none() || frame.content_digest != h.frame.content_digest {
        return None;
    }
    let label = current_label(frame, provider);
    (!same_label(&h.label, label)).then(|| Moved {
        held: h,
        label: label.to_owned(),
        provenance: frame.provenance.clone(),
        in_answer: false,
    })
}

/// Whether `held` (a label given by [`free_label`]) is still the label a
/// frame would be given for `wanted`: equal, or `wanted` with a ` #n`
/// suffix that kept it unique.
pub(super) fn same_label(held: &str, wanted: &str) -> bool {
    held == wanted
        || held.strip_prefix(wanted).is_some_and(|rest| {
            rest.strip_prefix(" #")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// `wanted`, or `wanted #2`, `#3`, … : the first not held by another frame.
pub(super) fn free_label(wanted: &str, key: &Key, taken: &BTreeMap<String, Key>) -> String {
    let free = |l: &str| taken.get(l).is_none_or(|k| k == key);
    if free(wanted) {
        return wanted.to_owned();
    }
    (2u32..)
        .map(|n| format!("{wanted} #{n}"))
        .find(|l| free(l))
        .unwrap_or_else(|| wanted.to_owned())
}

#[cfg(test)]
mod tests {
    use super::same_label;

    #[test]
    fn a_uniqueness_suffix_is_the_same_label_a_new_range_is_not() {
        assert!(same_label("a.rs:L1-4 f", "a.rs:L1-4 f"));
        assert!(same_label("a.rs:L1-4 f #2", "a.rs:L1-4 f"));
        assert!(!same_label("a.rs:L1-4 f #", "a.rs:L1-4 f"));
        assert!(!same_label("a.rs:L1-4 f #2x", "a.rs:L1-4 f"));
        assert!(!same_label("a.rs:L1-4 f", "a.rs:L5-8 f"));
        assert!(!same_label("a.rs:L1-4 fg", "a.rs:L1-4 f"));
    }
}
