//! Scripted NDJSON peers on in-memory pipes, driving the host's real
//! [`Connection`]: the handshake version rules (H1, H3) and lock-step
//! resynchronisation (H4), where the check must see exactly what the host
//! wrote and control exactly when each reply arrives.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use contextgraph_host::client::BoxFuture;
use contextgraph_host::{
    Answer, Connection, ConnectionOptions, Host, HostOptions, ProviderClient, ProviderDescriptor,
    RequestError, TransportKind,
};
use contextgraph_types::{ContextQuery, VerifyRequest, PROTOCOL_VERSION};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::time::Instant;

use super::adversary::honest_frame;
use super::bridge::seen;
use super::seen::Seen;
use super::HostSuiteOptions;
use contextgraph_conformance::outcome::{Evidence, Outcome};

/// Longest line a scripted peer reads from the host.
const PEER_LINE_CAP: u64 = 1024 * 1024;

fn ack(version: &str, name: &str, correlation: bool) -> Value {
    json!({
        "type": "handshake_ack",
        "protocol_version": version,
        "provider": {"name": name, "version": "1.0.0",
                     "data_flow": {"reads": true, "writes": false, "egress": false}},
        "capabilities": {"query": {"kinds": ["doc"]}, "correlation": correlation}
    })
}

fn transport() -> TransportKind {
    TransportKind::Stdio {
        program: "scripted-peer".to_owned(),
    }
}

async fn write_line(w: &mut (impl AsyncWriteExt + Unpin), v: &Value) -> std::io::Result<()> {
    let mut line = v.to_string().into_bytes();
    line.push(b'\n');
    w.write_all(&line).await?;
    w.flush().await
}

/// How a scripted lock-step peer answers each query.
#[derive(Clone)]
enum Pace {
    /// Every reply at once.
    Prompt,
    /// The reply to the query whose goal is `slow` is held back until the
    /// check has seen the host give up on that query (`given_up` is
    /// notified), or else until `fallback` has passed. The reply is late by
    /// construction, however the machine schedules the two sides: a timer
    /// race ("reply after 3× the deadline") is lost on a loaded machine when
    /// a stalled runtime wakes with the host's deadline and the peer's sleep
    /// both expired and takes the reply first. A host that ignores its
    /// deadline still gets the reply, after `fallback`, and accepts it, which
    /// is what the check then reports.
    LateFirst {
        given_up: Arc<Notify>,
        fallback: Duration,
    },
    /// Acknowledges the handshake, then never answers anything.
    Silent,
}

/// What a peer saw the host send.
#[derive(Default)]
struct Observed {
    queries: Vec<Value>,
}

async fn serve_peer(
    peer: DuplexStream,
    version: String,
    name: String,
    pace: Pace,
    seen: Arc<Mutex<Observed>>,
) -> std::io::Result<()> {
    let (r, mut w) = tokio::io::split(peer);
    let mut lines = BufReader::new(r).lines();
    // The handshake.
    let Some(_hello) = lines.next_line().await? else {
        return Ok(());
    };
    write_line(&mut w, &ack(&version, &name, false)).await?;
    while let Some(line) = lines.next_line().await? {
        if line.len() as u64 > PEER_LINE_CAP {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if v["type"] != "query" {
            continue;
        }
        let goal = v["query"]["goal"].as_str().unwrap_or_default().to_owned();
        if let Ok(mut s) = seen.lock() {
            s.queries.push(v.clone());
        }
        match &pace {
            Pace::Silent => continue,
            Pace::LateFirst { given_up, fallback } if goal == "slow" => {
                // `notify_one` keeps a permit, so a host that gave up before
                // this line was even read is not missed.
                tokio::select! {
                    () = given_up.notified() => {}
                    () = tokio::time::sleep(*fallback) => {}
                }
            }
            _ => {}
        }
        let frame = honest_frame(
            &format!("answer-{goal}"),
            &format!("the answer to {goal}\n"),
        );
        let reply = json!({"type": "frames", "result": {"frames": [frame], "truncated": false}});
        write_line(&mut w, &reply).await?;
    }
    Ok(())
}

async fn open(
    version: &str,
    name: &str,
    pace: Pace,
    options: ConnectionOptions,
) -> (
    Result<Connection, contextgraph_host::HandshakeError>,
    Arc<Mutex<Observed>>,
) {
    let (host_side, peer_side) = tokio::io::duplex(256 * 1024);
    let seen = Arc::new(Mutex::new(Observed::default()));
    tokio::spawn(serve_peer(
        peer_side,
        version.to_owned(),
        name.to_owned(),
        pace,
        Arc::clone(&seen),
    ));
    let (r, w) = tokio::io::split(host_side);
    let conn = Connection::open(r, w, "scripted-peer", transport(), options).await;
    (conn, seen)
}

/// Handshake the host with a peer acknowledging `version`.
pub(crate) async fn handshake_with_version(version: &str, timeout: Duration) -> Seen {
    let mut options = ConnectionOptions::default();
    options.handshake_timeout = timeout;
    match open(version, "scripted-peer", Pace::Prompt, options)
        .await
        .0
    {
        Ok(_) => Seen::Accepted {
            ids: vec![],
            dropped_kinds: vec![],
        },
        Err(e) => Seen::of_handshake_error(&e),
    }
}

fn seen_answer(answer: Result<Answer, contextgraph_host::ConnectionError>) -> Seen {
    match answer {
        Ok(Answer::Frames(r)) => Seen::Accepted {
            ids: r.frames.into_iter().map(|f| f.id).collect(),
            dropped_kinds: vec![],
        },
        Ok(other) => Seen::Failed {
            detail: format!("unexpected answer {other:?}"),
        },
        Err(e) => Seen::of_connection_error(&e),
    }
}

/// One lock-step session's observations: the two answers and whether any
/// query the host wrote carried an `id`.
pub(crate) struct Session {
    pub first: Seen,
    pub second: Seen,
    pub ids_sent: usize,
}

/// Lock-step decision. The twin answers promptly: each query gets its own
/// answer. The adversary answers the first query after its deadline: the
/// first must time out and the second must get *its own* answer or a
/// typed out-of-step error — never the late first reply. No query to a
/// lock-step peer may carry an `id` (H4).
pub(crate) fn decide_lockstep(twin: &Session, adversary: &Session) -> Outcome {
    let mut e = Evidence::default();
    let own = |s: &Seen, goal: &str| s.ids() == [format!("answer-{goal}")];
    if own(&twin.first, "slow") && own(&twin.second, "fast") {
        e.note("twin: each query answered with its own reply");
    } else {
        e.fail(format!(
            "twin: first {}, second {}; a correct host routes each prompt reply to its own request",
            twin.first, twin.second
        ));
    }
    if adversary.first == Seen::TimedOut {
        e.note("adversary: the first query timed out at its deadline");
    } else {
        e.fail(format!(
            "adversary: first query {}; it should have timed out",
            adversary.first
        ));
    }
    if own(&adversary.second, "slow") {
        e.fail(
            "adversary: the late reply to the first query was taken as the answer to the second",
        );
    } else if own(&adversary.second, "fast") || adversary.second == Seen::Desynchronised {
        e.note(format!(
            "adversary: second query {} (the late reply was not misattributed)",
            adversary.second
        ));
    } else {
        e.fail(format!(
            "adversary: second query {}; a correct host resynchronises (or reports the session out of step)",
            adversary.second
        ));
    }
    for (who, s) in [("twin", twin), ("adversary", adversary)] {
        if s.ids_sent > 0 {
            e.fail(format!(
                "{who}: {} query line(s) carried an id to a provider that did not declare correlation (H4)",
                s.ids_sent
            ));
        }
    }
    e.finish()
}

async fn lockstep_session(pace: Pace, first_deadline: Duration, second: Duration) -> Session {
    let mut options = ConnectionOptions::default();
    options.handshake_timeout = second;
    // Long enough for the late reply to arrive and be discarded.
    options.resync_wait = second;
    let given_up = match &pace {
        Pace::LateFirst { given_up, .. } => Some(Arc::clone(given_up)),
        _ => None,
    };
    let (conn, seen) = open(PROTOCOL_VERSION, "scripted-peer", pace, options).await;
    let conn = match conn {
        Ok(c) => c,
        Err(e) => {
            let s = Seen::of_handshake_error(&e);
            return Session {
                first: s.clone(),
                second: s,
                ids_sent: 0,
            };
        }
    };
    let q1 = ContextQuery::new("slow", 4, 2000);
    let q2 = ContextQuery::new("fast", 4, 2000);
    let first = seen_answer(conn.query(&q1, Instant::now() + first_deadline).await);
    // The host has given up on (or answered) the first query: only now may
    // the adversary's reply to it be written.
    if let Some(given_up) = given_up {
        given_up.notify_one();
    }
    let second = seen_answer(conn.query(&q2, Instant::now() + second).await);
    conn.shutdown().await;
    let ids_sent = seen
        .lock()
        .map(|s| s.queries.iter().filter(|q| q.get("id").is_some()).count())
        .unwrap_or(0);
    Session {
        first,
        second,
        ids_sent,
    }
}

pub(crate) async fn lockstep_resync(options: &HostSuiteOptions) -> Outcome {
    let deadline = options.hang_deadline.min(Duration::from_millis(100));
    // Only a host that waits past its deadline ever sees the reply before it
    // has given up; the slack bounds how long such a host is waited for.
    let late = Pace::LateFirst {
        given_up: Arc::new(Notify::new()),
        fallback: deadline + options.deadline_slack,
    };
    let (twin, adversary) = tokio::join!(
        lockstep_session(
            Pace::Prompt,
            options.request_timeout,
            options.request_timeout
        ),
        lockstep_session(late, deadline, options.request_timeout),
    );
    decide_lockstep(&twin, &adversary)
}

/// A scripted peer as a [`ProviderClient`], so a fan-out can include it:
/// the host's own [`Connection`] does the protocol, only the pipe is in memory.
struct PipeClient {
    conn: Connection,
    descriptor: Arc<ProviderDescriptor>,
}

impl ProviderClient for PipeClient {
    fn label(&self) -> String {
        self.descriptor.id.clone()
    }

    fn ready(
        &self,
        _deadline: Instant,
    ) -> BoxFuture<'_, Result<Arc<ProviderDescriptor>, RequestError>> {
        let d = Arc::clone(&self.descriptor);
        Box::pin(async move { Ok(d) })
    }

    fn query<'a>(
        &'a self,
        query: &'a ContextQuery,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        Box::pin(async move {
            self.conn
                .query(query, deadline)
                .await
                .map_err(RequestError::from)
        })
    }

    fn verify<'a>(
        &'a self,
        request: &'a VerifyRequest,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        Box::pin(async move {
            self.conn
                .verify(request, deadline)
                .await
                .map_err(RequestError::from)
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.conn.shutdown())
    }
}

async fn pipe_client(
    name: &str,
    pace: Pace,
    timeout: Duration,
) -> Result<Arc<dyn ProviderClient>, String> {
    let mut options = ConnectionOptions::default();
    options.handshake_timeout = timeout;
    let conn = open(PROTOCOL_VERSION, name, pace, options)
        .await
        .0
        .map_err(|e| format!("scripted peer {name}: {e}"))?;
    let descriptor = Arc::new(conn.descriptor().clone());
    Ok(Arc::new(PipeClient { conn, descriptor }))
}

/// Deadlines: a peer that acknowledges and then never answers, beside a
/// prompt twin, in one fan-out under [`HostSuiteOptions::hang_deadline`].
pub(crate) async fn hang_timeout(options: &HostSuiteOptions) -> Outcome {
    let mut host = Host::new(HostOptions::default());
    for (name, pace) in [("prompt", Pace::Prompt), ("silent", Pace::Silent)] {
        let client = match pipe_client(name, pace, options.request_timeout).await {
            Ok(c) => c,
            Err(e) => return Outcome::fail(e),
        };
        if let Err(e) = host.add(client, options.request_timeout).await {
            return Outcome::fail(format!("adding scripted peer {name}: {e}"));
        }
    }
    let deadline = options.hang_deadline;
    let query = ContextQuery::new("retry policy", 4, 2000);
    let (report, elapsed) = super::stdio::bounded_fan_out(
        host.query_all(&query, deadline),
        deadline,
        options.deadline_slack,
    )
    .await;
    host.shutdown().await;
    match report {
        Some(report) => super::stdio::decide_deadline(
            &seen(&report, "prompt"),
            "silent after the handshake",
            &seen(&report, "silent"),
            elapsed,
            deadline,
            options.deadline_slack,
        ),
        None => super::stdio::never_returned(elapsed, deadline),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_conformance::outcome::Kind;

    fn answer(goal: &str) -> Seen {
        Seen::Accepted {
            ids: vec![format!("answer-{goal}")],
            dropped_kinds: vec![],
        }
    }

    fn session(first: Seen, second: Seen, ids_sent: usize) -> Session {
        Session {
            first,
            second,
            ids_sent,
        }
    }

    #[test]
    fn lockstep_check_fails_when_a_late_reply_answers_the_next_request() {
        let twin = session(answer("slow"), answer("fast"), 0);
        let good = session(Seen::TimedOut, answer("fast"), 0);
        assert_eq!(decide_lockstep(&twin, &good).kind, Kind::Pass);
        let resync = session(Seen::TimedOut, Seen::Desynchronised, 0);
        assert_eq!(decide_lockstep(&twin, &resync).kind, Kind::Pass);
        let misattributed = session(Seen::TimedOut, answer("slow"), 0);
        assert_eq!(decide_lockstep(&twin, &misattributed).kind, Kind::Fail);
    }

    #[test]
    fn lockstep_check_fails_when_ids_go_to_a_lockstep_provider() {
        let twin = session(answer("slow"), answer("fast"), 2);
        let good = session(Seen::TimedOut, answer("fast"), 0);
        assert_eq!(decide_lockstep(&twin, &good).kind, Kind::Fail);
    }

    #[test]
    fn lockstep_check_fails_when_the_twin_is_not_served() {
        let twin = session(Seen::TimedOut, Seen::Desynchronised, 0);
        let good = session(Seen::TimedOut, answer("fast"), 0);
        assert_eq!(decide_lockstep(&twin, &good).kind, Kind::Fail);
    }
}
