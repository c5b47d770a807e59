//! The per-frame pass gives every frame its audit entry where it stands in
//! canonical order, builds candidates in parallel chunks, and rehydrates
//! reference frames between them. These tests pin what that pass must
//! keep: every frame is D1-checked before any budget decision (even one
//! that could never fit), a frame whose digest lies has no effect on any
//! other frame, and mixed workloads (every kind of early exclusion,
//! references among inline frames, on several threads) compose to the same
//! bytes as on one thread.

use crate::common::*;
use contextgraph_compose::{
    compose_with, sha256_digest, Composition, DuplicateBasis, Exclusion, FrameAudit, FrameStatus,
    Options, ProviderOutcome, ProviderStatus, Rehydrate,
};
use contextgraph_types::{ContentRef, ContextFrame, FrameKind, Provenance, Representation};

fn entry<'a>(c: &'a Composition, provider: &str, id: &str) -> &'a FrameAudit {
    let found: Vec<&FrameAudit> = c
        .audit
        .frames
        .iter()
        .filter(|f| f.frame.provider_id == provider && f.frame.frame_id == id)
        .collect();
    assert_eq!(found.len(), 1, "{provider}/{id} has exactly one entry");
    found[0]
}

/// A frame whose declared digest is another content's: D1 is broken.
fn lying(id: &str, content: &str) -> ContextFrame {
    let mut f = frame(id, content);
    f.content_digest = Some(sha256_digest(b"what it claims to be"));
    f
}

#[test]
fn d1_a_frame_that_could_never_fit_is_still_checked_and_reported_as_lying() {
    // 40 KB against a 600-token budget: over budget whatever happens, so a
    // composer deciding the budget first could skip hashing it. D1 comes
    // first: its entry names the mismatch and the digest actually computed.
    let big = text("big", 40_000);
    let outcomes = vec![ProviderOutcome::accepted(
        "docs",
        vec![lying("huge", &big), frame("small", "fits easily")],
    )];
    let c = composed(&outcomes, &budget(600));
    assert_sound(&c, &outcomes);
    let e = entry(&c, "docs", "huge");
    match e.exclusion() {
        Some(Exclusion::DigestMismatch { declared, actual }) => {
            assert_eq!(declared, &sha256_digest(b"what it claims to be"));
            assert_eq!(actual, &sha256_digest(big.as_bytes()));
        }
        other => panic!("expected digest_mismatch, got {other:?}"),
    }
    assert_eq!(
        e.content_sha256.map(|d| d.to_string()),
        Some(sha256_digest(big.as_bytes()))
    );
    assert_eq!(
        e.token_cost,
        contextgraph_types::token_cost_of_len(big.len())
    );
    assert!(entry(&c, "docs", "small").is_included());
}

#[test]
fn d1_a_lying_frame_neither_merges_regions_nor_contests_labels_nor_takes_budget() {
    // `bridge` lies about its digest and overlaps both `a` and `b` (which do
    // not overlap each other), asks for `a`'s label, and is large. Excluded
    // before dedup, it must change nothing: `a` and `b` stay two groups,
    // `a` keeps its label unqualified, and the provider's demand is that of
    // `a` and `b` alone.
    let uri = "file:///repo/src/lib.rs";
    let a = file_frame("a", &text("a", 300), uri, Some("L1-10"));
    let b = file_frame("b", &text("b", 300), uri, Some("L20-30"));
    let mut bridge = file_frame("bridge", &text("bridge", 5000), uri, Some("L5-25"));
    bridge.content_digest = Some(sha256_digest(b"not this content"));
    bridge.citation_label = a.citation_label.clone();
    let honest = vec![ProviderOutcome::accepted(
        "code",
        vec![a.clone(), b.clone()],
    )];
    let with_liar = vec![ProviderOutcome::accepted("code", vec![a, b, bridge])];
    let options = budget(2_000);
    let without = composed(&honest, &options);
    let with = composed(&with_liar, &options);
    assert_sound(&with, &with_liar);
    assert!(matches!(
        entry(&with, "code", "bridge").exclusion(),
        Some(Exclusion::DigestMismatch { .. })
    ));
    assert_eq!(with.prompt, without.prompt, "same prompt bytes");
    assert_eq!(with.citations, without.citations);
    assert_eq!(with.citations.len(), 2, "a and b are not merged");
    assert_eq!(
        with.citations[0].label, "label a",
        "a's label is not contested"
    );
    let split = |c: &Composition| {
        let p = &c.audit.providers[0];
        (p.demand, p.share, p.used, p.frames_included)
    };
    assert_eq!(split(&with), split(&without), "same demand, share and use");
}

#[test]
fn d1_an_honest_copy_of_a_liars_content_is_not_its_duplicate() {
    // Same bytes, one declaring the wrong digest: the liar is excluded
    // before dedup, so the honest copy is a group of its own and rendered.
    let body = text("shared", 500);
    let outcomes = vec![
        ProviderOutcome::accepted("aa", vec![lying("liar", &body)]),
        ProviderOutcome::accepted("bb", vec![frame("honest", &body)]),
    ];
    let c = composed(&outcomes, &unlimited());
    assert_sound(&c, &outcomes);
    assert!(matches!(
        entry(&c, "aa", "liar").exclusion(),
        Some(Exclusion::DigestMismatch { .. })
    ));
    let honest = entry(&c, "bb", "honest");
    assert!(honest.is_included());
    assert_eq!(c.citations.len(), 1);
    assert!(c.citations[0].merged.is_empty());
}

const RUNBOOK: &str = "Roll back with `deploy revert <sha>`, then page the owner.";

/// A reference frame (P3) to `ref://<id>`, whose canonical hash is that of
/// `source`, with a `file` provenance region.
fn reference(id: &str, source: &str, uri: &str, range: &str) -> ContextFrame {
    let mut f = ContextFrame::new(id, FrameKind::Doc, format!("Ref {id}"), "");
    f.content = None;
    f.token_cost = 0;
    f.representation = Representation::Reference;
    f.canonical_content_hash = Some(sha256_digest(source.as_bytes()));
    f.content_ref = Some(ContentRef {
        provider_id: "docs".into(),
        uri: format!("ref://{id}"),
        expires_at: None,
    });
    f.citation_label = Some(format!("ref {id}"));
    f.provenance = vec![Provenance {
        kind: Provenance::FILE.to_owned(),
        uri: Some(uri.to_owned()),
        range: Some(range.to_owned()),
        digest: None,
        method: None,
        by: None,
    }];
    f
}

/// Rehydrates `ref://ok-*` to the runbook and `ref://wrong-*` to other
/// bytes; anything else is unknown to it.
struct Store;

impl Rehydrate for Store {
    fn rehydrate(&self, _: &str, frame: &ContextFrame) -> Option<String> {
        let uri = &frame.content_ref.as_ref()?.uri;
        if uri.starts_with("ref://ok-") {
            Some(RUNBOOK.to_owned())
        } else if uri.starts_with("ref://wrong-") {
            Some("forged runbook".to_owned())
        } else {
            None
        }
    }
}

/// Hundreds of frames with every per-frame outcome interleaved in canonical
/// order, large enough to be split across threads: inline frames, lying
/// ones, unknown kinds, frames without content, references that rehydrate,
/// that rehydrate to the wrong bytes and that cannot be rehydrated, an id
/// served twice, and a quarantined provider.
fn mixed_workload() -> Vec<ProviderOutcome> {
    let mut docs = Vec::new();
    for i in 0..600 {
        let id = format!("f{i:04}");
        let uri = format!("file:///repo/docs/{}.md", i % 50);
        let range = format!("L{}-{}", 1 + (i % 7) * 10, 5 + (i % 7) * 10);
        let body = text(&id, 400 + (i * 37) % 900);
        let f = match i % 13 {
            1 => lying(&id, &body),
            2 => {
                let mut f = frame(&id, &body);
                f.kind = FrameKind::Other("vendor:thing".into());
                f
            }
            3 => {
                let mut f = frame(&id, &body);
                f.content = None;
                f.content_digest = None;
                f
            }
            4 => reference(&format!("ok-{id}"), RUNBOOK, &uri, &range),
            5 => reference(&format!("wrong-{id}"), RUNBOOK, &uri, &range),
            6 => reference(&format!("gone-{id}"), RUNBOOK, &uri, &range),
            // A copy of an earlier frame's content (same-content dedup).
            7 => frame(
                &id,
                &text(&format!("f{:04}", i - 7), 400 + ((i - 7) * 37) % 900),
            ),
            _ => file_frame(&id, &body, &uri, Some(&range)),
        };
        docs.push(f);
    }
    // One id served twice: both copies lose (D2).
    docs.push(frame("twice", "first copy"));
    docs.push(frame("twice", "second copy"));
    let quarantined = ProviderOutcome::quarantined(
        "shady",
        vec![frame("s1", "anything"), frame("s2", "else")],
        vec![],
    );
    vec![
        ProviderOutcome::accepted("docs", docs),
        quarantined,
        ProviderOutcome::accepted("extra", vec![frame("e1", &text("e1", 700))]),
    ]
}

/// [`assert_sound`] for compositions where [`Store`] rehydrated references:
/// their blocks hold the runbook, which the frames themselves do not.
fn assert_sound_rehydrated(c: &Composition, outcomes: &[ProviderOutcome]) {
    let mut inlined = outcomes.to_vec();
    for o in &mut inlined {
        if let ProviderStatus::Accepted { frames } = &mut o.status {
            for f in frames.iter_mut() {
                let ok = f
                    .content_ref
                    .as_ref()
                    .is_some_and(|r| r.uri.starts_with("ref://ok-"));
                if ok {
                    f.content = Some(RUNBOOK.to_owned());
                }
            }
        }
    }
    assert_sound(c, &inlined);
}

fn composed_with(outcomes: &[ProviderOutcome], options: &Options, threads: usize) -> Composition {
    compose_with(outcomes, &options.clone().with_threads(threads), &Store).expect("composes")
}

#[test]
fn d2_a_mixed_workload_composes_identically_on_any_number_of_threads() {
    let outcomes = mixed_workload();
    for options in [budget(3_000), budget(60_000), unlimited()] {
        let one = composed_with(&outcomes, &options, 1);
        assert_sound_rehydrated(&one, &outcomes);
        for threads in [2, 3, 8] {
            assert_eq!(
                composed_with(&outcomes, &options, threads),
                one,
                "{threads} threads"
            );
        }
    }
}

#[test]
fn audit_entries_of_a_mixed_workload_are_canonical_and_name_each_reason() {
    let outcomes = mixed_workload();
    let c = composed_with(&outcomes, &unlimited(), 2);
    assert_sound_rehydrated(&c, &outcomes);
    let key = |f: &FrameAudit| (f.frame.clone(), f.content_sha256, f.token_cost);
    assert!(
        c.audit.frames.windows(2).all(|w| key(&w[0]) <= key(&w[1])),
        "one list in canonical order, early exclusions merged in"
    );
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for e in &c.audit.frames {
        let id = e.frame.frame_id.as_str();
        let expected: &str = if e.frame.provider_id == "shady" {
            "provider_quarantined"
        } else if id == "twice" {
            "duplicate_id"
        } else if id.starts_with("ok-") {
            "rendered_or_duplicate"
        } else if id.starts_with("wrong-") || id.starts_with("gone-") {
            "unresolvable_reference"
        } else {
            match id.trim_start_matches('f').parse::<usize>().map(|i| i % 13) {
                Ok(1) => "digest_mismatch",
                Ok(2) => "unknown_kind",
                Ok(3) => "no_content",
                _ => "rendered_or_duplicate",
            }
        };
        let actual = match &e.status {
            FrameStatus::Included(_) => "rendered_or_duplicate",
            FrameStatus::Excluded(Exclusion::Duplicate { .. }) => "rendered_or_duplicate",
            FrameStatus::Excluded(Exclusion::ProviderQuarantined { .. }) => "provider_quarantined",
            FrameStatus::Excluded(Exclusion::DuplicateId) => "duplicate_id",
            FrameStatus::Excluded(Exclusion::UnresolvableReference { .. }) => {
                "unresolvable_reference"
            }
            FrameStatus::Excluded(Exclusion::DigestMismatch { .. }) => "digest_mismatch",
            FrameStatus::Excluded(Exclusion::UnknownKind { .. }) => "unknown_kind",
            FrameStatus::Excluded(Exclusion::NoContent) => "no_content",
            other => panic!(
                "{}: unexpected {other:?} under an unlimited budget",
                e.frame
            ),
        };
        assert_eq!(actual, expected, "{}", e.frame);
        *seen.entry(actual).or_default() += 1;
        // The digest is recorded exactly for what was hashed: inline
        // candidates (lying ones too) and verified rehydrations.
        let hashed = matches!(actual, "rendered_or_duplicate" | "digest_mismatch");
        assert_eq!(e.content_sha256.is_some(), hashed, "{}", e.frame);
    }
    assert_eq!(seen.len(), 7, "every outcome is exercised: {seen:?}");
}

#[test]
fn dedup_a_rehydrated_reference_joins_the_region_group_a_refused_one_does_not() {
    let uri = "file:///repo/docs/runbook.md";
    let inline = file_frame("inline", &text("inline", 900), uri, Some("L1-40"));
    let outcomes = vec![ProviderOutcome::accepted(
        "docs",
        vec![
            inline,
            reference("ok-runbook", RUNBOOK, uri, "L10-12"),
            reference("wrong-runbook", RUNBOOK, uri, "L30-35"),
        ],
    )];
    let c = compose_with(&outcomes, &unlimited(), &Store).expect("composes");
    assert_sound(&c, &outcomes);
    // The verified reference overlaps the inline frame: one group, the
    // inline frame (more content) represents it.
    match entry(&c, "docs", "ok-runbook").exclusion() {
        Some(Exclusion::Duplicate { of, basis }) => {
            assert_eq!(of.frame_id, "inline");
            assert_eq!(*basis, DuplicateBasis::OverlappingRegion);
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    assert_eq!(
        entry(&c, "docs", "ok-runbook")
            .content_sha256
            .map(|d| d.to_string()),
        Some(sha256_digest(RUNBOOK.as_bytes()))
    );
    assert!(matches!(
        entry(&c, "docs", "wrong-runbook").exclusion(),
        Some(Exclusion::UnresolvableReference { .. })
    ));
    assert_eq!(c.citations.len(), 1);
    assert_eq!(c.citations[0].frame.frame_id, "inline");
    let merged: Vec<&str> = c.citations[0]
        .merged
        .iter()
        .map(|m| m.frame_id.as_str())
        .collect();
    assert_eq!(
        merged,
        ["ok-runbook"],
        "the refused reference merges nothing"
    );
}

#[test]
fn d2_rehydrated_references_take_their_canonical_place_among_inline_frames() {
    // Stable placement renders in canonical FrameId order, whichever frames
    // were rehydrated: the reference between two inline frames is rendered
    // between them.
    let outcomes = vec![ProviderOutcome::accepted(
        "docs",
        vec![
            frame("z", &text("z", 200)),
            reference("ok-m", RUNBOOK, "file:///repo/m.md", "L1-2"),
            frame("a", &text("a", 200)),
        ],
    )];
    for threads in [1, 2] {
        let c = composed_with(&outcomes, &unlimited(), threads);
        assert_sound_rehydrated(&c, &outcomes);
        let order: Vec<&str> = c
            .citations
            .iter()
            .map(|c| c.frame.frame_id.as_str())
            .collect();
        assert_eq!(order, ["a", "ok-m", "z"], "{threads} threads");
    }
}
