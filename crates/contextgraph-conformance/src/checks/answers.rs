//! The query checks: the baseline answer, budget honesty, `as_of`, the kinds
//! filter, anchors, unknown members, determinism, and the validity of every
//! frame served on the main connection.
//!
//! Every derived query is the baseline query with one thing changed, so a
//! difference in the answer is attributable to that one thing (a frame the
//! baseline served but a tighter budget did not is a *withheld* candidate,
//! which `truncated` must admit).

use std::collections::BTreeSet;
use std::time::Instant;

use contextgraph_types::validate::Anchor;
use contextgraph_types::{
    ContextFrame, ContextQuery, ContextQueryResult, ErrorCode, FrameKind, Timestamp,
};
use serde_json::Value;

use super::{
    describe_violation, violations, Evidence, Main, Outcome, Served, USUAL_MAX_FRAMES,
    USUAL_MAX_TOKENS,
};
use crate::probe::{describe_error, to_query_reply, QueryReply};

/// Anchors judged by budget honesty; every other frame rule belongs to frame validity.
const BUDGET: [Anchor; 4] = [Anchor::B1, Anchor::B3, Anchor::B4, Anchor::Truncated];

fn is_budget(a: Anchor) -> bool {
    BUDGET.contains(&a) || a == Anchor::P4
}

/// R1 (and the start of everything else): ask the baseline query, trying
/// each configured goal until one is answered with frames.
pub(crate) fn query_answered(m: &mut Main<'_>) -> Outcome {
    let goals = m.options.goals.clone();
    let mut e = Evidence::default();
    for goal in &goals {
        let query = ContextQuery::new(goal.clone(), USUAL_MAX_FRAMES, USUAL_MAX_TOKENS);
        let reply = match m.ask(&query, &format!("waiting for the answer to goal {goal:?}")) {
            Ok(r) => r,
            Err(o) => return o,
        };
        match reply {
            QueryReply::Frames(result) => {
                e.note(format!(
                    "goal {goal:?}: {}",
                    QueryReply::Frames(result.clone()).describe()
                ));
                let found = !result.frames.is_empty();
                m.baseline = Some(Served { query, result });
                if found {
                    break;
                }
            }
            QueryReply::Error { code, message } => {
                e.fail(format!(
                    "goal {goal:?} (max_frames {USUAL_MAX_FRAMES}, max_tokens {USUAL_MAX_TOKENS}) was answered with {}",
                    describe_error(code.as_ref(), &message)
                ));
                break;
            }
            QueryReply::Unexpected(t) => {
                e.fail(format!("goal {goal:?} was answered with a {t} envelope"));
                break;
            }
        }
    }
    e.finish()
}

/// B1, B3, B4, P4 and `truncated` at the usual budget, `max_frames` 1, and
/// tiny token budgets.
pub(crate) fn budget_honesty(m: &mut Main<'_>) -> Outcome {
    let base = match m.base_frames() {
        Ok(b) => b,
        Err(o) => return o,
    };
    let mut e = Evidence::default();
    judge_budget(&mut e, "usual budget", &base.query, &base.result, None);
    let costs: Vec<u32> = base.result.frames.iter().map(|f| f.token_cost).collect();
    let cheapest = costs.iter().copied().filter(|c| *c > 0).min().unwrap_or(1);
    let half = u32::try_from(base.result.total_token_cost() / 2)
        .unwrap_or(u32::MAX)
        .max(1);
    let cases = [
        ("max_frames 1", 1, USUAL_MAX_TOKENS),
        ("max_tokens 1", USUAL_MAX_FRAMES, 1),
        (
            "max_tokens = the cheapest frame's cost",
            USUAL_MAX_FRAMES,
            cheapest,
        ),
        (
            "max_tokens = half the usual answer's cost",
            USUAL_MAX_FRAMES,
            half,
        ),
    ];
    for (label, max_frames, max_tokens) in cases {
        let mut q = base.query.clone();
        q.max_frames = max_frames;
        q.max_tokens = max_tokens;
        let label = format!("{label} (max_frames {max_frames}, max_tokens {max_tokens})");
        match m.ask(&q, &format!("waiting for the answer at {label}")) {
            Ok(QueryReply::Frames(r)) => judge_budget(&mut e, &label, &q, &r, Some(&base.result)),
            Ok(QueryReply::Error { code, message }) => {
                let fits = costs.iter().any(|c| *c <= max_tokens);
                if code == Some(ErrorCode::BudgetUnsatisfiable) && !fits {
                    e.note(format!(
                        "{label}: budget_unsatisfiable (no frame costs {max_tokens} or less)"
                    ));
                } else {
                    e.fail(format!(
                        "{label}: answered {} although frames of the usual answer fit",
                        describe_error(code.as_ref(), &message)
                    ));
                }
            }
            Ok(QueryReply::Unexpected(t)) => {
                e.fail(format!("{label}: answered with a {t} envelope"))
            }
            Err(o) => return with_prefix(e, o),
        }
    }
    e.finish()
}

fn judge_budget(
    e: &mut Evidence,
    label: &str,
    query: &ContextQuery,
    result: &ContextQueryResult,
    fuller: Option<&ContextQueryResult>,
) {
    let found = violations(query, result, is_budget);
    for v in &found {
        e.fail(format!("{label}: {}", describe_violation(result, v)));
    }
    if let Some(fuller) = fuller {
        let returned: BTreeSet<&str> = result.frames.iter().map(|f| f.id.as_str()).collect();
        let withheld: Vec<&str> = fuller
            .frames
            .iter()
            .map(|f| f.id.as_str())
            .filter(|id| !returned.contains(id))
            .collect();
        if !withheld.is_empty() && !result.truncated {
            e.fail(format!(
                "{label}: truncated is false although {} candidate(s) served at the usual budget were withheld (e.g. {:?})",
                withheld.len(),
                withheld[0]
            ));
        }
    }
    if found.is_empty() {
        e.note(format!(
            "{label}: {} frame(s) costing {} ≤ {} tokens, truncated {}",
            result.frames.len(),
            result.total_token_cost(),
            query.max_tokens,
            result.truncated
        ));
    }
}

/// Keep the evidence gathered so far when a later request broke the connection.
fn with_prefix(mut e: Evidence, o: Outcome) -> Outcome {
    for line in o.evidence {
        if o.kind == super::Kind::Fail {
            e.fail(line);
        } else {
            e.note(line);
        }
    }
    let mut out = e.finish();
    if o.kind == super::Kind::Skipped && out.kind == super::Kind::Pass {
        out.kind = super::Kind::Skipped;
    }
    out
}

/// The instant a frame is dated at for `as_of`: its `recorded_at` or
/// `valid_from`, whichever is later (both must not be after the pin).
fn dated(frame: &ContextFrame) -> Option<Timestamp> {
    [&frame.recorded_at, &frame.valid_from]
        .into_iter()
        .filter_map(|t| t.as_deref().and_then(|t| Timestamp::parse(t).ok()))
        .max()
}

/// `as_of`: pin the baseline query just before the newest frame it served;
/// nothing dated after the pin may come back.
pub(crate) fn as_of(m: &mut Main<'_>) -> Outcome {
    let base = match m.base_frames() {
        Ok(b) => b,
        Err(o) => return o,
    };
    let dates: BTreeSet<Timestamp> = base.result.frames.iter().filter_map(dated).collect();
    let mut newest_first = dates.iter().rev();
    let pin = match (newest_first.next(), newest_first.next()) {
        (None, _) => {
            return Outcome::skipped(
                "no frame of the baseline answer carries recorded_at or valid_from, so there is nothing an as_of pin could exclude",
            )
        }
        (Some(_), Some(second)) => *second,
        (Some(only), None) => Timestamp::from_unix(only.unix_seconds() - 1, only.subsec_nanos()),
    };
    let after = base
        .result
        .frames
        .iter()
        .filter(|f| dated(f).is_some_and(|t| t > pin))
        .count();
    let mut q = base.query.clone();
    q.as_of = Some(pin.to_wire());
    let label = format!("as_of {}", pin.to_wire());
    let mut e = Evidence::default();
    match m.ask(&q, &format!("waiting for the answer pinned at {label}")) {
        Ok(QueryReply::Frames(r)) => {
            let found = violations(&q, &r, |a| a == Anchor::AsOf);
            for v in &found {
                e.fail(format!("{label}: {}", describe_violation(&r, v)));
            }
            e.note(format!(
                "{label}: {} frame(s) answered; {after} frame(s) of the unpinned answer are dated after the pin",
                r.frames.len()
            ));
        }
        Ok(other) => e.fail(format!("{label}: answered {}", other.describe())),
        Err(o) => return o,
    }
    e.finish()
}

/// Q1: each declared kind alone; an undeclared kind; and no undeclared kind
/// in any unfiltered answer.
pub(crate) fn kinds_filter(m: &mut Main<'_>) -> Outcome {
    let declared = match m.ack() {
        Ok(a) => a.capabilities.query.kinds.clone(),
        Err(o) => return o,
    };
    if declared.is_empty() {
        return Outcome::not_applicable(
            "capabilities.query.kinds is empty: no kind is declared to filter on",
        );
    }
    let base = match m.base_query() {
        Ok(q) => q,
        Err(o) => return o,
    };
    let mut e = Evidence::default();
    let mut judged = 0usize;
    for kind in &declared {
        let mut q = base.clone();
        q.kinds = vec![kind.clone()];
        let label = format!("kinds [{}]", kind.as_str());
        match m.ask(&q, &format!("waiting for the answer to {label}")) {
            Ok(QueryReply::Frames(r)) => {
                judged += r.frames.len();
                let found = violations(&q, &r, |a| a == Anchor::Q1);
                for v in &found {
                    e.fail(format!("{label}: {}", describe_violation(&r, v)));
                }
                if found.is_empty() {
                    e.note(format!(
                        "{label}: {} frame(s), all {}",
                        r.frames.len(),
                        kind.as_str()
                    ));
                }
            }
            Ok(QueryReply::Error { code, message }) => e.fail(format!(
                "{label}: {} declared in capabilities.query.kinds, yet answered {}",
                kind.as_str(),
                describe_error(code.as_ref(), &message)
            )),
            Ok(QueryReply::Unexpected(t)) => {
                e.fail(format!("{label}: answered with a {t} envelope"))
            }
            Err(o) => return with_prefix(e, o),
        }
    }
    if let Some(other) = FrameKind::KNOWN.iter().find(|k| !declared.contains(k)) {
        let mut q = base.clone();
        q.kinds = vec![other.clone()];
        let label = format!("undeclared kinds [{}]", other.as_str());
        match m.ask(&q, &format!("waiting for the answer to {label}")) {
            Ok(QueryReply::Frames(r)) if r.frames.is_empty() => e.note(format!("{label}: no frames")),
            Ok(QueryReply::Frames(r)) => e.fail(format!(
                "{label}: {} frame(s) (first {:?} of kind {}) for a kind the provider does not declare; answer zero frames or unsupported_kind",
                r.frames.len(),
                r.frames[0].id,
                r.frames[0].kind.as_str()
            )),
            Ok(QueryReply::Error {
                code: Some(ErrorCode::UnsupportedKind),
                ..
            }) => e.note(format!("{label}: unsupported_kind")),
            Ok(other) => e.fail(format!(
                "{label}: answered {}; a provider serving none of the kinds returns zero frames or unsupported_kind",
                other.describe()
            )),
            Err(o) => return with_prefix(e, o),
        }
    }
    let mut undeclared = BTreeSet::new();
    for s in m.served.iter().filter(|s| s.query.kinds.is_empty()) {
        for f in &s.result.frames {
            if !declared.contains(&f.kind) && undeclared.insert(f.id.clone()) {
                e.fail(format!(
                    "frame {:?} is of kind {:?}, which capabilities.query.kinds does not declare",
                    f.id,
                    f.kind.as_str()
                ));
            }
        }
    }
    if judged == 0 && !e.failed() {
        return Outcome::skipped(
            "no frames came back for any declared kind, so the filter was never exercised",
        );
    }
    e.finish()
}

/// G4: a frame is anchored when its `uri` equals an anchor (0 hops) or one
/// of its relations' `target_uri` does (1 hop).
fn anchored(frame: &ContextFrame, anchor: &str) -> bool {
    frame.uri.as_deref() == Some(anchor) || frame.relations.iter().any(|r| r.target_uri == anchor)
}

/// G4, for graph providers: anchor the baseline query at the URI that
/// anchors the fewest (and lowest-ranked) of its frames; the answer must
/// contain an anchored frame and list every anchored frame before every
/// unanchored one. The ranking is the order of the `frames` list: a `score`
/// is the provider's own relevance estimate, not comparable across the
/// frames' sources, and the protocol asks that anchored frames be *ranked*
/// above, not scored above.
pub(crate) fn anchor_relevance(m: &mut Main<'_>) -> Outcome {
    match m.ack() {
        Ok(a) if !a.capabilities.graph => {
            return Outcome::not_applicable("capabilities.graph is false; G4 binds graph providers")
        }
        Ok(_) => {}
        Err(o) => return o,
    }
    let base = match m.base_frames() {
        Ok(b) => b,
        Err(o) => return o,
    };
    let frames = &base.result.frames;
    let mut uris: BTreeSet<&str> = BTreeSet::new();
    for f in frames {
        uris.extend(f.uri.as_deref());
        uris.extend(f.relations.iter().map(|r| r.target_uri.as_str()));
    }
    // Fewest anchored frames first, then the lowest-ranked first anchored
    // frame: the anchor that most needs the boost to surface.
    let choice = uris
        .iter()
        .filter(|u| !u.is_empty())
        .map(|u| {
            let count = frames.iter().filter(|f| anchored(f, u)).count();
            let first = frames.iter().position(|f| anchored(f, u)).unwrap_or(0);
            (count, std::cmp::Reverse(first), *u)
        })
        .min();
    let Some((_, _, anchor)) = choice else {
        return Outcome::skipped(
            "no frame of the baseline answer has a uri or a relation target to anchor on",
        );
    };
    let anchor = anchor.to_owned();
    let mut q = base.query.clone();
    q.anchors = vec![anchor.clone()];
    q.max_frames = q
        .max_frames
        .max(u32::try_from(frames.len()).unwrap_or(u32::MAX));
    let mut e = Evidence::default();
    let r = match m.ask(&q, &format!("waiting for the answer anchored at {anchor}")) {
        Ok(QueryReply::Frames(r)) => r,
        Ok(other) => {
            return Outcome::fail(format!("anchors [{anchor}]: answered {}", other.describe()))
        }
        Err(o) => return o,
    };
    let flags: Vec<bool> = r.frames.iter().map(|f| anchored(f, &anchor)).collect();
    let count = flags.iter().filter(|a| **a).count();
    if count == 0 {
        let had = frames
            .iter()
            .find(|f| anchored(f, &anchor))
            .map(|f| f.id.as_str())
            .unwrap_or("?");
        e.fail(format!(
            "anchors [{anchor}]: no anchored frame returned, although the unanchored query served {had:?}, which is anchored there"
        ));
        return e.finish();
    }
    if let (Some(last_in), Some(first_out)) = (
        flags.iter().rposition(|a| *a),
        flags.iter().position(|a| !*a),
    ) {
        if last_in > first_out {
            e.fail(format!(
                "anchors [{anchor}]: anchored frame {:?} is ranked {} but unanchored {:?} is ranked {}; anchored frames must come first",
                r.frames[last_in].id,
                last_in + 1,
                r.frames[first_out].id,
                first_out + 1
            ));
        }
    }
    e.note(format!(
        "anchors [{anchor}]: {count} of {} frame(s) anchored, listed first (the list order is the ranking; scores are not compared)",
        r.frames.len()
    ));
    e.finish()
}

/// U1: a query carrying members from a future minor (in the envelope and in
/// the query) and an unknown notification before it; the query must be
/// answered as if they were absent, and the notification not at all.
pub(crate) fn unknown_members(m: &mut Main<'_>) -> Outcome {
    let base = match m.base_query() {
        Ok(q) => q,
        Err(o) => return o,
    };
    let expected: Option<BTreeSet<(String, Option<String>)>> =
        m.baseline.as_ref().map(|b| identities(&b.result));
    let timeout = m.options.request_timeout;
    let probe = match m.live() {
        Ok(p) => p,
        Err(o) => return o,
    };
    let mut e = Evidence::default();
    let notice =
        br#"{"type":"cgp_inspect_notice","note":"an unknown notification; ignore it (U1)"}"#;
    if let Err(b) = probe.send_raw(notice, "sending an unknown notification") {
        return Outcome::fail(b.0);
    }
    let (line, id) = probe.query_line(&base, |envelope| {
        envelope.insert("x-cgp-inspect-trace".into(), Value::from("abc123"));
        if let Some(Value::Object(query)) = envelope.get_mut("query") {
            query.insert(
                "x-future-member".into(),
                serde_json::json!({"nested": [1, 2, 3]}),
            );
            query.insert("filters".into(), serde_json::json!(["language"]));
        }
    });
    let what = "waiting for the answer to a query with unknown members";
    if let Err(b) = probe.send_raw(&line, what) {
        return Outcome::fail(b.0);
    }
    let deadline = Instant::now() + timeout;
    let mut reply = None;
    while reply.is_none() {
        match probe.next_reply(deadline, what) {
            Ok(Some(env)) => {
                let is_notice_answer = matches!(env, contextgraph_codec::Envelope::Error { .. })
                    && id.is_some()
                    && env.correlation_id().is_none();
                if is_notice_answer {
                    e.fail(format!(
                        "the unknown notification (no id) was answered with an error; unknown notifications are ignored: {}",
                        describe_envelope(&env)
                    ));
                } else {
                    reply = Some(env);
                }
            }
            Ok(None) => {
                return Outcome::fail(format!(
                    "no reply within {} ms while {what}",
                    timeout.as_millis()
                ))
            }
            Err(b) => return Outcome::fail(b.0),
        }
    }
    match reply.map(to_query_reply) {
        Some(QueryReply::Frames(r)) => {
            let got = identities(&r);
            match &expected {
                Some(exp) if *exp != got => e.fail(format!(
                    "with unknown members the answer differs from the plain query's: {} frame(s) instead of {}",
                    got.len(),
                    exp.len()
                )),
                _ => e.note(format!(
                    "query with unknown members answered like the plain query ({} frame(s))",
                    got.len()
                )),
            }
            m.served.push(Served {
                query: base,
                result: r,
            });
        }
        Some(other) => e.fail(format!(
            "a query with unknown members was answered {}; unknown members are ignored",
            other.describe()
        )),
        None => {}
    }
    e.finish()
}

fn describe_envelope(env: &contextgraph_codec::Envelope) -> String {
    match env {
        contextgraph_codec::Envelope::Error { code, message, .. } => {
            describe_error(code.as_ref(), message)
        }
        other => format!("a {} envelope", other.type_name()),
    }
}

fn identities(r: &ContextQueryResult) -> BTreeSet<(String, Option<String>)> {
    r.frames
        .iter()
        .map(|f| (f.id.clone(), f.content_digest.clone()))
        .collect()
}

/// D2: the baseline query again gives the same frame ids and digests.
pub(crate) fn determinism(m: &mut Main<'_>) -> Outcome {
    let base = match m.base_frames() {
        Ok(b) => b,
        Err(o) => return o,
    };
    let mut e = Evidence::default();
    match m.ask(
        &base.query,
        "waiting for the answer to the baseline query, asked again",
    ) {
        Ok(QueryReply::Frames(r)) => {
            let (a, b) = (identities(&base.result), identities(&r));
            if a == b {
                let same_order = base
                    .result
                    .frames
                    .iter()
                    .map(|f| &f.id)
                    .eq(r.frames.iter().map(|f| &f.id));
                e.note(format!(
                    "{} frame(s), same ids and digests{}",
                    b.len(),
                    if same_order {
                        ", same order"
                    } else {
                        " (in another order)"
                    }
                ));
            } else {
                let first = a
                    .symmetric_difference(&b)
                    .next()
                    .map(|(id, _)| id.clone())
                    .unwrap_or_default();
                e.fail(format!(
                    "the same query gave {} frame(s) then {}, differing at {first:?}; identical queries must give identical frames",
                    a.len(),
                    b.len()
                ));
            }
        }
        Ok(other) => e.fail(format!(
            "asked again, the baseline query was answered {}",
            other.describe()
        )),
        Err(o) => return o,
    }
    e.finish()
}

/// Every other frame rule, over every frame served on the main connection:
/// F1–F4, F5 grammar, D1 (recomputed), D2 duplicate ids, P1–P3, G1–G2,
/// embeddings, and U2 (a kind outside the family's closed set).
pub(crate) fn frame_validity(m: &mut Main<'_>) -> Outcome {
    let total: usize = m.served.iter().map(|s| s.result.frames.len()).sum();
    if total == 0 {
        return match m.base_frames() {
            Err(o) => o,
            Ok(_) => Outcome::skipped("no frames were served"),
        };
    }
    let mut e = Evidence::default();
    let mut seen = BTreeSet::new();
    let keep = |a: Anchor| !is_budget(a) && a != Anchor::Q1 && a != Anchor::AsOf;
    for s in &m.served {
        for v in violations(&s.query, &s.result, keep) {
            let (id, field) = super::locate(&s.result, &v.path);
            if seen.insert((id.map(str::to_owned), v.anchor, field.to_owned())) {
                e.fail(describe_violation(&s.result, &v));
            }
        }
        for f in &s.result.frames {
            if !f.kind.is_known()
                && seen.insert((Some(f.id.clone()), Anchor::U2, "kind".to_owned()))
            {
                e.fail(format!(
                    "frame {:?}: kind {:?} is outside the contextgraph/1 closed set ({}); hosts drop it as opaque (U2)",
                    f.id,
                    f.kind.as_str(),
                    FrameKind::KNOWN.iter().map(FrameKind::as_str).collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    let distinct = m.distinct_frames().len();
    e.note(format!(
        "{distinct} distinct frame(s) in {} answer(s) checked, content digests recomputed",
        m.served.len()
    ));
    e.finish()
}
