//! Checks with in-process adversaries and pipe peers: handshake rules
//! (H1–H3), budget honesty (B1–B4, B2 quarantine) and unknown kinds (U2).

use contextgraph_host::InProcessProvider;
use contextgraph_types::{ContextQuery, FrameKind};

use super::adversary::{answer, honest_frame, honest_frames, Scripted};
use super::bridge::{fan_out, seen};
use super::peer::handshake_with_version;
use super::seen::Seen;
use super::{pair, HostSuiteOptions};
use contextgraph_conformance::outcome::{Evidence, Outcome};

fn accepted_handshake(s: &Seen) -> bool {
    matches!(s, Seen::Accepted { .. })
}

/// H1/H3 decision: every same-family version accepted, every foreign or
/// malformed one refused naming H1 or H3.
pub(crate) fn decide_versions(same: &[(&str, Seen)], foreign: &[(&str, Seen)]) -> Outcome {
    let mut e = Evidence::default();
    for (v, s) in same {
        if accepted_handshake(s) {
            e.note(format!("twin acking {v}: accepted (same family)"));
        } else {
            e.fail(format!(
                "twin acking {v}: {s}; a correct host accepts another minor of its own family"
            ));
        }
    }
    for (v, s) in foreign {
        match s {
            Seen::HandshakeRejected { anchors }
                if anchors.iter().any(|a| a == "H3" || a == "H1") =>
            {
                e.note(format!("adversary acking {v}: {s}"))
            }
            other => e.fail(format!(
                "adversary acking {v}: {other}; a correct host refuses a foreign family with a typed H3 error"
            )),
        }
    }
    e.finish()
}

pub(crate) async fn version_reject(options: &HostSuiteOptions) -> Outcome {
    let t = options.request_timeout;
    let mut same = Vec::new();
    for v in ["contextgraph/1.0-draft", "contextgraph/1.7"] {
        same.push((v, handshake_with_version(v, t).await));
    }
    let mut foreign = Vec::new();
    for v in [
        "contextgraph/2.0-draft",
        "contextgraph/0.9",
        "othergraph/1.0",
        "contextgraph/1",
    ] {
        foreign.push((v, handshake_with_version(v, t).await));
    }
    decide_versions(&same, &foreign)
}

/// H2 decision: the twin is accepted, each empty identity refused naming H2.
pub(crate) fn decide_identity(twin: &Seen, adversaries: &[(&str, Seen)]) -> Outcome {
    let mut e = Evidence::default();
    for (name, s) in adversaries {
        pair(
            &mut e,
            "named twin",
            twin,
            accepted_handshake,
            "accepts a provider with a name and a version",
            name,
            s,
            |s| matches!(s, Seen::HandshakeRejected { anchors } if anchors.iter().any(|a| a == "H2")),
            "refuses it at the handshake naming H2",
        );
    }
    e.finish()
}

fn in_process_handshake(p: Scripted) -> Seen {
    match InProcessProvider::new(p) {
        Ok(_) => Seen::Accepted {
            ids: vec![],
            dropped_kinds: vec![],
        },
        Err(e) => Seen::of_handshake_error(&e),
    }
}

pub(crate) fn identity_reject() -> Outcome {
    let none = |_: &ContextQuery| answer(vec![]);
    let twin = in_process_handshake(Scripted::new("identity-twin", none));
    let adversaries = vec![
        (
            "empty name",
            in_process_handshake(Scripted::new("x", none).with_identity("", "1.0.0")),
        ),
        (
            "empty version",
            in_process_handshake(Scripted::new("x", none).with_identity("no-version", "")),
        ),
    ];
    decide_identity(&twin, &adversaries)
}

/// Decision for the budget and frame-limit checks: the twin's frames are
/// accepted, each adversary is quarantined naming its anchor.
pub(crate) fn decide_quarantine(twin: &Seen, adversaries: &[(&str, &str, Seen)]) -> Outcome {
    let mut e = Evidence::default();
    for (name, anchor, s) in adversaries {
        pair(
            &mut e,
            "honest twin",
            twin,
            Seen::accepted_some,
            "accepts an honest answer within budget",
            name,
            s,
            |s| s.quarantined_for(anchor),
            &format!("quarantines the whole answer naming {anchor} (B2), never truncating it"),
        );
    }
    e.finish()
}

const MAX_TOKENS: u32 = 100;

pub(crate) async fn budget_drop(options: &HostSuiteOptions) -> Outcome {
    let query = ContextQuery::new("retry policy", 10, MAX_TOKENS);
    let twin = Scripted::new("budget-twin", |_| answer(honest_frames("twin", 3)));
    let overstated = Scripted::new("lying-cost", |_| {
        let mut f = honest_frames("over", 3);
        f[1].token_cost += 5;
        answer(f)
    });
    let understated = Scripted::new("under-reported-cost", |_| {
        let mut f = honest_frames("under", 3);
        f[2].token_cost -= 1;
        answer(f)
    });
    let overrun = Scripted::new("budget-overrun", |q| {
        // Honest costs, but together far over max_tokens.
        let big = "x".repeat(usize::try_from(q.max_tokens).unwrap_or(100) * 3);
        answer(vec![
            honest_frame("big-a", &big),
            honest_frame("big-b", &big),
        ])
    });
    let report = match fan_out(
        vec![twin, overstated, understated, overrun],
        &query,
        options.request_timeout,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => return Outcome::fail(e),
    };
    decide_quarantine(
        &seen(&report, "budget-twin"),
        &[
            ("lying-cost", "B3", seen(&report, "lying-cost")),
            (
                "under-reported-cost",
                "B3",
                seen(&report, "under-reported-cost"),
            ),
            ("budget-overrun", "B1", seen(&report, "budget-overrun")),
        ],
    )
}

const MAX_FRAMES: u32 = 3;

pub(crate) async fn frame_limit(options: &HostSuiteOptions) -> Outcome {
    let query = ContextQuery::new("retry policy", MAX_FRAMES, 8000);
    let n = usize::try_from(MAX_FRAMES).unwrap_or(3);
    let twin = Scripted::new("limit-twin", move |_| answer(honest_frames("twin", n)));
    let flood = Scripted::new("frame-flood", move |_| {
        answer(honest_frames("flood", n + 5))
    });
    match fan_out(vec![twin, flood], &query, options.request_timeout).await {
        Ok(report) => decide_quarantine(
            &seen(&report, "limit-twin"),
            &[("frame-flood", "B4", seen(&report, "frame-flood"))],
        ),
        Err(e) => Outcome::fail(e),
    }
}

/// U2 decision: the twin is accepted whole; the adversary's good frames are
/// accepted and only its unknown-kind frame is dropped, with a note.
pub(crate) fn decide_unknown_kind(twin: &Seen, adversary: &Seen, unknown_id: &str) -> Outcome {
    let mut e = Evidence::default();
    pair(
        &mut e,
        "known-kinds twin",
        twin,
        |s| {
            s.accepted_some()
                && matches!(s, Seen::Accepted { dropped_kinds, .. } if dropped_kinds.is_empty())
        },
        "accepts every frame and drops none",
        "unknown-kind",
        adversary,
        |s| {
            matches!(s, Seen::Accepted { ids, dropped_kinds }
                if !ids.is_empty()
                    && !ids.iter().any(|i| i == unknown_id)
                    && dropped_kinds.iter().any(|k| k == "hologram"))
        },
        "drops only the frame of unknown kind (U2) and accepts the rest",
    );
    e.finish()
}

const UNKNOWN_ID: &str = "hologram-0";

pub(crate) async fn unknown_kind(options: &HostSuiteOptions) -> Outcome {
    let query = ContextQuery::new("retry policy", 10, 8000);
    let twin = Scripted::new("kind-twin", |_| answer(honest_frames("twin", 2)));
    let odd = Scripted::new("unknown-kind", |_| {
        let mut frames = honest_frames("odd", 2);
        let mut f = honest_frame(UNKNOWN_ID, "a frame of a kind from a later minor\n");
        f.kind = FrameKind::from_wire("hologram");
        frames.push(f);
        answer(frames)
    });
    match fan_out(vec![twin, odd], &query, options.request_timeout).await {
        Ok(report) => decide_unknown_kind(
            &seen(&report, "kind-twin"),
            &seen(&report, "unknown-kind"),
            UNKNOWN_ID,
        ),
        Err(e) => Outcome::fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_conformance::outcome::Kind;

    fn ok() -> Seen {
        Seen::Accepted {
            ids: vec!["a".into()],
            dropped_kinds: vec![],
        }
    }

    fn rejected(a: &str) -> Seen {
        Seen::HandshakeRejected {
            anchors: vec![a.into()],
        }
    }

    #[test]
    fn h3_version_check_fails_when_the_host_accepts_a_foreign_family() {
        let good = decide_versions(&[("1.7", ok())], &[("2.0", rejected("H3"))]);
        assert_eq!(good.kind, Kind::Pass);
        let lax = decide_versions(&[("1.7", ok())], &[("2.0", ok())]);
        assert_eq!(lax.kind, Kind::Fail);
        let paranoid = decide_versions(&[("1.7", rejected("H3"))], &[("2.0", rejected("H3"))]);
        assert_eq!(paranoid.kind, Kind::Fail);
    }

    #[test]
    fn h2_identity_check_fails_when_an_empty_name_is_accepted() {
        assert_eq!(
            decide_identity(&ok(), &[("empty", rejected("H2"))]).kind,
            Kind::Pass
        );
        assert_eq!(decide_identity(&ok(), &[("empty", ok())]).kind, Kind::Fail);
        assert_eq!(
            decide_identity(&ok(), &[("empty", rejected("H1"))]).kind,
            Kind::Fail,
            "refused, but for the wrong rule"
        );
    }

    #[test]
    fn b2_quarantine_check_fails_when_the_liar_is_accepted_or_the_twin_refused() {
        let q = Seen::Quarantined {
            anchors: vec!["B3".into()],
            offered: 3,
        };
        assert_eq!(
            decide_quarantine(&ok(), &[("liar", "B3", q.clone())]).kind,
            Kind::Pass
        );
        assert_eq!(
            decide_quarantine(&ok(), &[("liar", "B3", ok())]).kind,
            Kind::Fail
        );
        assert_eq!(
            decide_quarantine(&q, &[("liar", "B3", q.clone())]).kind,
            Kind::Fail
        );
        // A host that silently truncates the flood to max_frames "accepts" it.
        assert_eq!(
            decide_quarantine(&ok(), &[("flood", "B4", ok())]).kind,
            Kind::Fail
        );
    }

    #[test]
    fn u2_check_fails_when_the_unknown_frame_is_kept_or_the_answer_dropped() {
        let good = Seen::Accepted {
            ids: vec!["a".into()],
            dropped_kinds: vec!["hologram".into()],
        };
        assert_eq!(decide_unknown_kind(&ok(), &good, "h").kind, Kind::Pass);
        let kept = Seen::Accepted {
            ids: vec!["a".into(), "h".into()],
            dropped_kinds: vec![],
        };
        assert_eq!(decide_unknown_kind(&ok(), &kept, "h").kind, Kind::Fail);
        let dropped_all = Seen::Quarantined {
            anchors: vec!["U2".into()],
            offered: 2,
        };
        assert_eq!(
            decide_unknown_kind(&ok(), &dropped_all, "h").kind,
            Kind::Fail
        );
    }
}
