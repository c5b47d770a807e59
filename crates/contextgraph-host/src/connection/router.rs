//! Routing replies to the requests they answer: by echoed id (correlated,
//! H4), by identities (`verified`), or by send order (lock-step), with late
//! and unattributable replies counted, never delivered elsewhere.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use contextgraph_codec::{decode_envelope, DecodeError, Envelope};
use contextgraph_types::FrameId;
use tokio::sync::{oneshot, Notify};

use super::reader::Diagnostics;
use super::{Answer, CloseReason, ConnectionError};
use crate::line_watch::OpenLine;
use contextgraph_types::display_text::{bounded, bounded_bytes};

pub(super) type Waiter = oneshot::Sender<Result<Answer, ConnectionError>>;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Query,
    Verify,
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Query => "query",
            Kind::Verify => "verify",
        }
    }
}

/// A lock-step request awaiting its reply, in send order.
pub(super) struct Slot {
    pub(super) token: u64,
    pub(super) kind: Kind,
    /// `None` once the request timed out: its reply is owed but unwanted.
    pub(super) waiter: Option<Waiter>,
}

/// A correlated-mode verify awaiting its `verified`, matched by identities.
pub(super) struct PendingVerify {
    pub(super) token: u64,
    pub(super) ids: Vec<FrameId>,
    pub(super) waiter: Waiter,
}

#[derive(Default)]
pub(super) struct Router {
    /// Correlated queries by the number in their id.
    pub(super) pending: HashMap<u64, Waiter>,
    /// Lock-step requests in send order.
    pub(super) queue: VecDeque<Slot>,
    /// Correlated verifies, oldest first.
    pub(super) verifies: VecDeque<PendingVerify>,
    pub(super) closed: Option<CloseReason>,
    pub(super) diag: Diagnostics,
    /// The largest query number ever issued: a reply naming one at or below
    /// it that nobody waits for is late, anything else was never sent.
    pub(super) max_issued: u64,
}

pub(super) struct Shared {
    pub(super) provider: String,
    pub(super) correlated: bool,
    /// Bytes of the line the reader is in the middle of.
    pub(super) open_line: Arc<OpenLine>,
    pub(super) max_line_bytes: usize,
    pub(super) router: Mutex<Router>,
    /// Signalled whenever the lock-step queue becomes empty or the session closes.
    pub(super) drained: Notify,
}

impl Shared {
    /// A session state with nothing outstanding, for unit tests.
    #[cfg(test)]
    pub(super) fn for_tests(correlated: bool) -> Shared {
        Shared {
            provider: "p".into(),
            correlated,
            open_line: Arc::new(OpenLine::default()),
            max_line_bytes: 1024,
            router: Mutex::new(Router::default()),
            drained: Notify::new(),
        }
    }

    /// Close the session because a line ran away (§1), and the error its
    /// requests get.
    pub(super) fn close_runaway(&self) -> ConnectionError {
        let error = ConnectionError::RunawayLine {
            provider: self.provider.clone(),
            line_bytes: self.open_line.bytes(),
            max_line_bytes: self.max_line_bytes,
        };
        self.close(CloseReason::RunawayLine, Some(error.clone()));
        error
    }

    /// Whether the reader is inside a line already past the cap.
    pub(super) fn in_oversized_line(&self) -> bool {
        self.open_line.bytes() > self.max_line_bytes as u64
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Router> {
        // A panic while holding the lock cannot leave the router in a state
        // worse than "some request missed its reply", which deadlines cover.
        self.router.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn closed_error(&self, reason: CloseReason) -> ConnectionError {
        ConnectionError::Closed {
            provider: self.provider.clone(),
            reason,
        }
    }

    /// Close the session: fail everything outstanding with `error_for(reason)`.
    pub(super) fn close(&self, reason: CloseReason, error: Option<ConnectionError>) {
        let mut r = self.lock();
        if r.closed.is_some() {
            return;
        }
        r.closed = Some(reason.clone());
        let error = error.unwrap_or_else(|| self.closed_error(reason));
        let r = &mut *r;
        let waiters: Vec<Waiter> = r
            .pending
            .drain()
            .map(|(_, w)| w)
            .chain(r.queue.drain(..).filter_map(|s| s.waiter))
            .chain(r.verifies.drain(..).map(|v| v.waiter))
            .collect();
        for w in waiters {
            let _ = w.send(Err(error.clone()));
        }
        self.drained.notify_waiters();
    }
}

/// What a decoded line means for routing.
pub(super) enum Incoming {
    Reply {
        id: Option<String>,
        answer: Result<Answer, String>,
        type_name: Cow<'static, str>,
    },
    Noise,
}

pub(super) fn classify(shared: &Shared, line: &[u8]) -> Incoming {
    let noise = |note: String, unknown: bool| {
        let mut r = shared.lock();
        if unknown {
            r.diag.unknown_envelopes += 1;
        } else {
            r.diag.garbage_lines += 1;
        }
        r.diag.note(note);
        Incoming::Noise
    };
    match decode_envelope(line) {
        Ok(Envelope::Frames { id, result }) => Incoming::Reply {
            id,
            answer: Ok(Answer::Frames(result)),
            type_name: Cow::Borrowed("frames"),
        },
        Ok(Envelope::Verified { response }) => Incoming::Reply {
            id: None,
            answer: Ok(Answer::Verified(response)),
            type_name: Cow::Borrowed("verified"),
        },
        Ok(Envelope::Error { id, code, message }) => Incoming::Reply {
            id,
            answer: Ok(Answer::Error {
                code,
                message: bounded(&message, 1024),
            }),
            type_name: Cow::Borrowed("error"),
        },
        Ok(Envelope::Unknown { type_name, .. }) => noise(
            format!(
                "ignored an envelope of unknown type {:?}",
                bounded(&type_name, 40)
            ),
            true,
        ),
        Ok(other) => noise(
            format!("ignored an unexpected {} envelope", other.type_name()),
            false,
        ),
        // A reply-typed envelope that does not decode still answers a request:
        // deliver the failure rather than let the request time out.
        Err(DecodeError::Malformed {
            type_name,
            id,
            reason,
        }) if matches!(type_name.as_str(), "frames" | "verified" | "error") => Incoming::Reply {
            id,
            answer: Err(bounded(&reason, 512)),
            type_name: Cow::Owned(type_name),
        },
        Err(e) => noise(
            format!(
                "ignored a line that is not an envelope ({e}): {}",
                bounded_bytes(line, 80)
            ),
            false,
        ),
    }
}

pub(super) fn route(shared: &Shared, line: &[u8]) {
    let Incoming::Reply {
        id,
        answer,
        type_name,
    } = classify(shared, line)
    else {
        return;
    };
    let answer = answer.map_err(|detail| ConnectionError::Malformed {
        provider: shared.provider.clone(),
        detail,
    });
    if shared.correlated {
        route_correlated(shared, id, answer, &type_name);
    } else {
        route_lockstep(shared, answer, &type_name);
    }
}

pub(super) fn route_lockstep(
    shared: &Shared,
    answer: Result<Answer, ConnectionError>,
    type_name: &str,
) {
    let mut r = shared.lock();
    let Some(slot) = r.queue.pop_front() else {
        r.diag.unattributable_replies += 1;
        r.diag.note(format!(
            "discarded a {type_name} reply no request was waiting for"
        ));
        return;
    };
    let drained = r.queue.is_empty();
    match slot.waiter {
        None => {
            r.diag.late_replies += 1;
            r.diag.note(format!(
                "discarded a late {type_name} reply to a timed-out request"
            ));
        }
        Some(waiter) => {
            drop(r);
            let answer = match (slot.kind, answer) {
                (Kind::Query, Ok(Answer::Verified(_))) | (Kind::Verify, Ok(Answer::Frames(_))) => {
                    Err(ConnectionError::WrongReply {
                        provider: shared.provider.clone(),
                        expected: slot.kind.name(),
                        got: type_name.to_owned(),
                    })
                }
                (_, other) => other,
            };
            let _ = waiter.send(answer);
            if drained {
                shared.drained.notify_waiters();
            }
            return;
        }
    }
    drop(r);
    if drained {
        shared.drained.notify_waiters();
    }
}

pub(super) fn route_correlated(
    shared: &Shared,
    id: Option<String>,
    answer: Result<Answer, ConnectionError>,
    type_name: &str,
) {
    let mut r = shared.lock();
    if type_name == "verified" || (id.is_none() && type_name == "error" && !r.verifies.is_empty()) {
        let index = match &answer {
            Ok(Answer::Verified(resp)) => r.verifies.iter().position(|v| {
                resp.verdicts
                    .iter()
                    .all(|verdict| v.ids.contains(&verdict.frame))
            }),
            _ => (!r.verifies.is_empty()).then_some(0),
        };
        match index.and_then(|i| r.verifies.remove(i)) {
            Some(v) => {
                drop(r);
                let _ = v.waiter.send(answer);
            }
            None => {
                r.diag.unattributable_replies += 1;
                r.diag
                    .note("discarded a verified reply matching no outstanding verify".into());
            }
        }
        return;
    }
    let number = id
        .as_deref()
        .and_then(|s| s.strip_prefix('q'))
        .filter(|digits| !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse::<u64>().ok());
    if let Some(n) = number {
        if let Some(waiter) = r.pending.remove(&n) {
            drop(r);
            let _ = waiter.send(answer);
            return;
        }
        if n <= r.max_issued {
            r.diag.late_replies += 1;
            r.diag
                .note(format!("discarded a late {type_name} reply for q{n}"));
            return;
        }
    }
    drop(r);
    let detail = match id {
        None => format!("a {type_name} reply carried no id"),
        Some(id) => format!(
            "a {type_name} reply carried id {:?}, which this host never sent",
            bounded(&id, 64)
        ),
    };
    let error = ConnectionError::Correlation {
        provider: shared.provider.clone(),
        detail,
    };
    shared.close(CloseReason::CorrelationViolation, Some(error));
}

#[cfg(test)]
mod tests {
    //! The router alone, fed lines as the reader would: which waiter gets
    //! which reply, and what is counted instead of delivered.

    use super::*;

    const FRAMES_Q1: &[u8] =
        br#"{"type":"frames","id":"q1","result":{"frames":[],"truncated":true}}"#;
    const FRAMES_NO_ID: &[u8] = br#"{"type":"frames","result":{"frames":[],"truncated":false}}"#;
    const VERIFIED: &[u8] = br#"{"type":"verified","response":{"verdicts":[]}}"#;

    fn shared(correlated: bool) -> Shared {
        Shared::for_tests(correlated)
    }

    fn frames_line(id: &str) -> Vec<u8> {
        format!(r#"{{"type":"frames","id":"{id}","result":{{"frames":[],"truncated":false}}}}"#)
            .into_bytes()
    }

    fn lockstep_slot(
        s: &Shared,
        token: u64,
        kind: Kind,
    ) -> oneshot::Receiver<Result<Answer, ConnectionError>> {
        let (tx, rx) = oneshot::channel();
        s.lock().queue.push_back(Slot {
            token,
            kind,
            waiter: Some(tx),
        });
        rx
    }

    fn pending(s: &Shared, n: u64) -> oneshot::Receiver<Result<Answer, ConnectionError>> {
        let (tx, rx) = oneshot::channel();
        let mut r = s.lock();
        r.pending.insert(n, tx);
        r.max_issued = r.max_issued.max(n);
        rx
    }

    #[test]
    fn lockstep_replies_go_to_requests_in_send_order() {
        let s = shared(false);
        let mut first = lockstep_slot(&s, 1, Kind::Query);
        let mut second = lockstep_slot(&s, 2, Kind::Query);
        route(&s, FRAMES_Q1);
        match first.try_recv() {
            Ok(Ok(Answer::Frames(result))) => assert!(result.truncated),
            other => panic!("the first request gets the first reply, got {other:?}"),
        }
        assert!(second.try_recv().is_err(), "the second is still waiting");
        route(&s, FRAMES_NO_ID);
        assert!(matches!(second.try_recv(), Ok(Ok(Answer::Frames(_)))));
        assert!(s.lock().queue.is_empty());
    }

    #[test]
    fn a_timed_out_lockstep_slot_consumes_its_late_reply() {
        let s = shared(false);
        let _abandoned = lockstep_slot(&s, 1, Kind::Query);
        s.lock().queue[0].waiter = None;
        let mut next = lockstep_slot(&s, 2, Kind::Query);
        route(&s, FRAMES_NO_ID);
        assert!(
            next.try_recv().is_err(),
            "the late reply is not the next request's"
        );
        assert_eq!(s.lock().diag.late_replies, 1);
        route(&s, FRAMES_NO_ID);
        assert!(matches!(next.try_recv(), Ok(Ok(Answer::Frames(_)))));
    }

    #[test]
    fn a_lockstep_reply_nobody_waits_for_is_counted_not_delivered() {
        let s = shared(false);
        route(&s, FRAMES_NO_ID);
        let r = s.lock();
        assert_eq!(r.diag.unattributable_replies, 1);
        assert!(r.closed.is_none());
    }

    #[test]
    fn a_lockstep_reply_of_the_wrong_type_is_a_typed_error() {
        let s = shared(false);
        let mut query = lockstep_slot(&s, 1, Kind::Query);
        route(&s, VERIFIED);
        match query.try_recv() {
            Ok(Err(ConnectionError::WrongReply { expected, got, .. })) => {
                assert_eq!((expected, got.as_str()), ("query", "verified"))
            }
            other => panic!("expected WrongReply, got {other:?}"),
        }
    }

    #[test]
    fn noise_is_counted_and_answers_nothing() {
        let s = shared(false);
        let mut waiting = lockstep_slot(&s, 1, Kind::Query);
        route(&s, b"not json");
        route(&s, br#"{"type":"from_the_future"}"#);
        assert!(waiting.try_recv().is_err());
        let r = s.lock();
        assert_eq!((r.diag.garbage_lines, r.diag.unknown_envelopes), (1, 1));
        assert_eq!(r.diag.recent.len(), 2);
    }

    #[test]
    fn correlated_replies_go_by_id_in_any_order() {
        let s = shared(true);
        let mut q1 = pending(&s, 1);
        let mut q2 = pending(&s, 2);
        route(&s, &frames_line("q2"));
        assert!(q1.try_recv().is_err());
        assert!(matches!(q2.try_recv(), Ok(Ok(Answer::Frames(_)))));
        route(&s, FRAMES_Q1);
        assert!(matches!(q1.try_recv(), Ok(Ok(Answer::Frames(_)))));
    }

    #[test]
    fn a_correlated_reply_to_a_forgotten_id_is_late() {
        let s = shared(true);
        let _q1 = pending(&s, 1);
        s.lock().pending.remove(&1);
        route(&s, FRAMES_Q1);
        let r = s.lock();
        assert_eq!(r.diag.late_replies, 1);
        assert!(r.closed.is_none());
    }

    #[test]
    fn an_id_never_issued_or_missing_breaks_h4_and_fails_everything() {
        for line in [frames_line("q9"), frames_line("q01"), FRAMES_NO_ID.to_vec()] {
            let s = shared(true);
            let mut q1 = pending(&s, 1);
            route(&s, &line);
            assert!(matches!(
                q1.try_recv(),
                Ok(Err(ConnectionError::Correlation { .. }))
            ));
            assert_eq!(s.lock().closed, Some(CloseReason::CorrelationViolation));
        }
    }

    #[test]
    fn a_verified_reply_goes_to_the_verify_whose_identities_it_echoes() {
        let s = shared(true);
        let (tx, mut rx) = oneshot::channel();
        s.lock().verifies.push_back(PendingVerify {
            token: 1,
            ids: Vec::new(),
            waiter: tx,
        });
        let mut query = pending(&s, 1);
        route(&s, VERIFIED);
        assert!(matches!(rx.try_recv(), Ok(Ok(Answer::Verified(_)))));
        assert!(
            query.try_recv().is_err(),
            "a verified never answers a query"
        );
        route(&s, VERIFIED);
        assert_eq!(s.lock().diag.unattributable_replies, 1);
    }

    #[test]
    fn closing_fails_every_outstanding_request_once() {
        let s = shared(true);
        let mut q1 = pending(&s, 1);
        s.close(CloseReason::Shutdown, None);
        assert!(matches!(
            q1.try_recv(),
            Ok(Err(ConnectionError::Closed {
                reason: CloseReason::Shutdown,
                ..
            }))
        ));
        s.close(CloseReason::EndOfOutput, None);
        assert_eq!(s.lock().closed, Some(CloseReason::Shutdown));
    }
}
