//! H4, for providers declaring `correlation`: every reply on the main
//! connection so far echoed its request id, and a burst of queries sent at
//! once (plus one malformed query) comes back with each id on its own answer.
//!
//! "Its own answer" is checked against the same queries asked one at a time
//! first; the burst queries differ in `max_frames`, so answers swapped
//! between ids show up as different frame lists.

use std::collections::BTreeMap;

use contextgraph_codec::Envelope;
use contextgraph_types::ErrorCode;

use super::{Evidence, Main, Outcome};
use crate::probe::{describe_error, QueryReply};

/// Queries in flight at once (plus the malformed one).
const IN_FLIGHT: u32 = 4;

pub(crate) fn correlation(m: &mut Main<'_>) -> Outcome {
    match m.ack() {
        Ok(a) if !a.capabilities.correlation => {
            return Outcome::not_applicable(
                "capabilities.correlation is false: the provider is queried in lock-step, which is conformant (H4)",
            )
        }
        Ok(_) => {}
        Err(o) => return o,
    }
    let base = match m.base_query() {
        Ok(q) => q,
        Err(o) => return o,
    };
    let mut e = Evidence::default();
    let mut expected: BTreeMap<String, Result<Vec<String>, String>> = BTreeMap::new();
    let mut lines = Vec::new();
    for k in 1..=IN_FLIGHT {
        let mut q = base.clone();
        q.max_frames = k;
        let answer = match m.ask(&q, &format!("waiting for the answer at max_frames {k}")) {
            Ok(QueryReply::Frames(r)) => Ok(r.frames.iter().map(|f| f.id.clone()).collect()),
            Ok(other) => Err(other.describe()),
            Err(o) => return o,
        };
        let probe = match m.live() {
            Ok(p) => p,
            Err(o) => return o,
        };
        let id = probe.fresh_id("burst");
        let line = serde_json::json!({"type": "query", "id": id, "query": q});
        lines.push(serde_json::to_vec(&line).unwrap_or_default());
        expected.insert(id, answer);
    }
    let probe = match m.live() {
        Ok(p) => p,
        Err(o) => return o,
    };
    for fault in &probe.id_faults {
        e.fail(format!("H4: {fault}"));
    }
    let bad_id = probe.fresh_id("burst-bad");
    let bad = serde_json::json!({"type": "query", "id": bad_id, "query": {"goal": 7, "max_frames": "many"}});
    lines.push(serde_json::to_vec(&bad).unwrap_or_default());
    let replies = match probe.burst(&lines, "waiting for a burst of queries in flight at once") {
        Ok(r) => r,
        Err(b) => return Outcome::fail(b.0),
    };
    if replies.len() < lines.len() {
        e.fail(format!(
            "only {} of {} replies to queries in flight at once arrived in time",
            replies.len(),
            lines.len()
        ));
    }
    let mut answered = BTreeMap::new();
    for reply in &replies {
        let Some(id) = reply.correlation_id() else {
            e.fail(format!(
                "H4: a {} reply to the burst carried no id (correlation declared)",
                reply.type_name()
            ));
            continue;
        };
        *answered.entry(id.to_owned()).or_insert(0) += 1;
        if id == bad_id {
            match reply {
                Envelope::Error { code, .. }
                    if ErrorCode::effective(code.as_ref()) == ErrorCode::BadRequest => {}
                Envelope::Error { code, message, .. } => e.fail(format!(
                    "the malformed query {id:?} was answered {}, not bad_request",
                    describe_error(code.as_ref(), message)
                )),
                other => e.fail(format!(
                    "the malformed query {id:?} was answered with a {} envelope",
                    other.type_name()
                )),
            }
            continue;
        }
        let Some(want) = expected.get(id) else {
            e.fail(format!(
                "H4: a reply echoed {id:?}, which no request carried"
            ));
            continue;
        };
        let got = match reply {
            Envelope::Frames { result, .. } => {
                Ok(result.frames.iter().map(|f| f.id.clone()).collect())
            }
            Envelope::Error { code, message, .. } => Err(describe_error(code.as_ref(), message)),
            other => Err(format!("a {} envelope", other.type_name())),
        };
        if &got != want {
            e.fail(format!(
                "H4: the reply echoing {id:?} does not carry that query's answer ({} instead of {})",
                summarize(&got),
                summarize(want)
            ));
        }
    }
    for (id, n) in &answered {
        if *n > 1 {
            e.fail(format!("H4: {n} replies echoed {id:?}"));
        }
    }
    if !e.failed() {
        e.note(format!(
            "{} requests in flight at once, each answered once under its own id; the malformed one with bad_request",
            lines.len()
        ));
    }
    e.finish()
}

fn summarize(answer: &Result<Vec<String>, String>) -> String {
    match answer {
        Ok(ids) => format!("{} frame(s)", ids.len()),
        Err(e) => e.clone(),
    }
}
