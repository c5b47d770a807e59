//! The suite's host side of one connection: requests with deadlines,
//! correlation ids, and a log of everything on the wire that was not a reply.
//!
//! A probe sends one request at a time (except [`Probe::burst`], which is
//! how the correlation check puts several in flight) and takes the next
//! reply-shaped envelope as the answer, whatever id it carries: a wrong or
//! missing id is logged as an H4 fault for the correlation check instead of
//! derailing every other check.
//!
//! Once the provider stops answering (timeout, exit, closed output) the
//! probe is *broken*: later requests fail at once with the original reason,
//! so a hung provider costs one timeout, not one per check.

use std::time::{Duration, Instant};

use contextgraph_codec::{encode_line, Envelope};
use contextgraph_types::{
    ContextQuery, ContextQueryResult, ErrorCode, VerifyRequest, VerifyResponse,
};
use serde_json::Value;

use crate::target::{Channel, ExitOutcome, Incoming};
use crate::text::MAX_EVIDENCE_CHARS;
use contextgraph_types::display_text::bounded;

/// Most wire faults kept in a [`WireLog`] (the rest are counted).
const MAX_LOGGED_FAULTS: usize = 16;

/// How long to let a provider that closed its output finish exiting, so
/// its exit code and last stderr lines make it into the evidence.
const EXIT_SETTLE: Duration = Duration::from_millis(300);

/// The reason a connection cannot be used any more.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Broken(pub String);

/// What arrived on the wire that was not a reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireLog {
    /// Faults (§1: lines that are not envelopes, oversized lines,
    /// request-type envelopes from a provider), the first few described.
    pub faults: Vec<String>,
    /// Faults beyond the described ones.
    pub more_faults: usize,
    /// Unknown notifications (no `id`), which a host ignores (U1).
    pub notifications: usize,
}

impl WireLog {
    fn fault(&mut self, text: String) {
        if self.faults.len() < MAX_LOGGED_FAULTS {
            self.faults.push(bounded(&text, MAX_EVIDENCE_CHARS));
        } else {
            self.more_faults += 1;
        }
    }

    /// Fold `other` into this log.
    pub fn merge(&mut self, other: &WireLog, label: &str) {
        for f in &other.faults {
            self.fault(format!("{label}: {f}"));
        }
        self.more_faults += other.more_faults;
        self.notifications += other.notifications;
    }

    /// Whether no fault was seen.
    pub fn is_clean(&self) -> bool {
        self.faults.is_empty() && self.more_faults == 0
    }
}

/// An answer to a query.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryReply {
    /// `frames`.
    Frames(ContextQueryResult),
    /// `error`.
    Error {
        /// The code sent, if any.
        code: Option<ErrorCode>,
        /// The message.
        message: String,
    },
    /// Another envelope type (named).
    Unexpected(String),
}

impl QueryReply {
    /// A short description for evidence.
    pub fn describe(&self) -> String {
        match self {
            QueryReply::Frames(r) => format!(
                "{} frame(s), {} tokens, truncated {}",
                r.frames.len(),
                r.total_token_cost(),
                r.truncated
            ),
            QueryReply::Error { code, message } => describe_error(code.as_ref(), message),
            QueryReply::Unexpected(t) => format!("a {t} envelope"),
        }
    }
}

/// `error <code>: <message>`, clipped.
pub fn describe_error(code: Option<&ErrorCode>, message: &str) -> String {
    let code = code.map_or("(no code)", ErrorCode::as_str);
    bounded(&format!("error {code}: {message}"), MAX_EVIDENCE_CHARS)
}

/// One connection, from the suite's side.
pub struct Probe {
    channel: Box<dyn Channel>,
    timeout: Duration,
    correlation: bool,
    next_id: u64,
    broken: Option<Broken>,
    /// Non-reply traffic seen so far.
    pub wire: WireLog,
    /// H4 faults seen on ordinary requests (reply ids that do not echo).
    pub id_faults: Vec<String>,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe")
            .field("correlation", &self.correlation)
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

impl Probe {
    /// A probe over `channel`, each reply awaited at most `timeout`.
    pub fn new(channel: Box<dyn Channel>, timeout: Duration) -> Self {
        Probe {
            channel,
            timeout,
            correlation: false,
            next_id: 0,
            broken: None,
            wire: WireLog::default(),
            id_faults: Vec::new(),
        }
    }

    /// Send ids on queries from now on (the provider declared correlation, H4).
    pub fn set_correlation(&mut self, correlation: bool) {
        self.correlation = correlation;
    }

    /// Whether the probe sends ids.
    pub fn correlation(&self) -> bool {
        self.correlation
    }

    /// Why the connection is unusable, if it is.
    pub fn broken(&self) -> Option<&Broken> {
        self.broken.as_ref()
    }

    /// A fresh request id.
    pub fn fresh_id(&mut self, label: &str) -> String {
        self.next_id += 1;
        format!("cgp-inspect-{label}-{}", self.next_id)
    }

    fn check(&self) -> Result<(), Broken> {
        match &self.broken {
            Some(b) => Err(b.clone()),
            None => Ok(()),
        }
    }

    fn fail(&mut self, reason: String) -> Broken {
        let b = Broken(bounded(&reason, 2 * MAX_EVIDENCE_CHARS));
        self.broken = Some(b.clone());
        b
    }

    /// Explain that the provider went away while `what` was pending.
    fn gone(&mut self, what: &str, how: &str) -> Broken {
        let deadline = Instant::now() + EXIT_SETTLE;
        let mut code = self.channel.exited();
        while code.is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            code = self.channel.exited();
        }
        let exit = match code {
            Some(Some(c)) => format!("; it exited with code {c}"),
            Some(None) => "; it was killed by a signal".to_owned(),
            None => String::new(),
        };
        let tail = self.channel.stderr_tail();
        let stderr = if tail.is_empty() {
            String::new()
        } else {
            format!("; stderr: {}", bounded(&tail, 300))
        };
        self.fail(format!("{how} while {what}{exit}{stderr}"))
    }

    /// Send raw bytes as one line, expecting no particular reply.
    pub fn send_raw(&mut self, line: &[u8], what: &str) -> Result<(), Broken> {
        self.check()?;
        if let Err(e) = self.channel.send(line) {
            return Err(self.gone(what, &e));
        }
        Ok(())
    }

    /// Send an envelope, expecting no particular reply.
    pub fn send(&mut self, env: &Envelope, what: &str) -> Result<(), Broken> {
        let mut line =
            encode_line(env).map_err(|e| Broken(format!("cannot encode {what}: {e}")))?;
        line.pop();
        self.send_raw(&line, what)
    }

    /// The next reply-shaped envelope before `deadline`, logging non-reply
    /// traffic; `Ok(None)` on timeout (the probe is not marked broken).
    pub fn next_reply(
        &mut self,
        deadline: Instant,
        what: &str,
    ) -> Result<Option<Envelope>, Broken> {
        self.check()?;
        loop {
            let Some(item) = self.channel.recv(deadline) else {
                return Ok(None);
            };
            match item {
                Incoming::Envelope(env) => match env {
                    Envelope::Frames { .. }
                    | Envelope::Error { .. }
                    | Envelope::Verified { .. }
                    | Envelope::HandshakeAck { .. } => return Ok(Some(env)),
                    Envelope::Unknown { id: None, .. } => self.wire.notifications += 1,
                    other => self.wire.fault(format!(
                        "the provider sent a {} envelope{}, which only a host sends or which nobody defined",
                        other.type_name(),
                        other
                            .correlation_id()
                            .map(|i| format!(" with id {i:?}"))
                            .unwrap_or_default()
                    )),
                },
                Incoming::BadLine { start, reason } => self
                    .wire
                    .fault(format!("a stdout line is not an envelope ({reason}): {start:?}")),
                Incoming::Oversized { bytes } => self.wire.fault(format!(
                    "a line of {bytes} bytes exceeded the suite's line cap and was discarded"
                )),
                Incoming::Failed(reason) => return Err(self.fail(format!("{reason} (while {what})"))),
                Incoming::Closed => return Err(self.gone(what, "the provider closed its output")),
            }
        }
    }

    /// Send `line` and take the next reply as its answer. A reply whose id
    /// does not echo `sent_id` (correlating providers) is logged in
    /// [`id_faults`](Self::id_faults).
    pub fn exchange(
        &mut self,
        line: &[u8],
        sent_id: Option<&str>,
        what: &str,
    ) -> Result<Envelope, Broken> {
        self.send_raw(line, what)?;
        let deadline = Instant::now() + self.timeout;
        match self.next_reply(deadline, what)? {
            Some(reply) => {
                self.note_id(sent_id, &reply, what);
                Ok(reply)
            }
            None => {
                let t = self.timeout;
                Err(self.fail(format!("no reply within {} ms while {what}", t.as_millis())))
            }
        }
    }

    fn note_id(&mut self, sent: Option<&str>, reply: &Envelope, what: &str) {
        if !self.correlation {
            return;
        }
        let Some(sent) = sent else { return };
        if matches!(
            reply,
            Envelope::Verified { .. } | Envelope::HandshakeAck { .. }
        ) {
            return;
        }
        match reply.correlation_id() {
            Some(got) if got == sent => {}
            Some(got) => self.id_faults.push(bounded(
                &format!(
                    "{what}: sent id {sent:?}, the {} reply echoed {got:?}",
                    reply.type_name()
                ),
                MAX_EVIDENCE_CHARS,
            )),
            None => self.id_faults.push(bounded(
                &format!(
                    "{what}: sent id {sent:?}, the {} reply carried no id",
                    reply.type_name()
                ),
                MAX_EVIDENCE_CHARS,
            )),
        }
    }

    /// The handshake: the first reply to a `handshake` in `version`.
    pub fn handshake(&mut self, version: &str) -> Result<Envelope, Broken> {
        let env = Envelope::Handshake {
            protocol_version: version.to_owned(),
        };
        let mut line = encode_line(&env).map_err(|e| Broken(e.to_string()))?;
        line.pop();
        self.exchange(&line, None, "waiting for the handshake reply")
    }

    /// The query as a JSON line (with an id when correlating); `tweak` may
    /// add members to the envelope object before it is encoded.
    pub fn query_line(
        &mut self,
        query: &ContextQuery,
        tweak: impl FnOnce(&mut serde_json::Map<String, Value>),
    ) -> (Vec<u8>, Option<String>) {
        let id = self.correlation.then(|| self.fresh_id("q"));
        let mut object = serde_json::Map::new();
        object.insert("type".into(), Value::from("query"));
        if let Some(id) = &id {
            object.insert("id".into(), Value::from(id.as_str()));
        }
        object.insert(
            "query".into(),
            serde_json::to_value(query).unwrap_or(Value::Null),
        );
        tweak(&mut object);
        (
            serde_json::to_vec(&Value::Object(object)).unwrap_or_default(),
            id,
        )
    }

    /// Ask `query` and return its answer.
    pub fn query(&mut self, query: &ContextQuery, what: &str) -> Result<QueryReply, Broken> {
        let (line, id) = self.query_line(query, |_| {});
        let reply = self.exchange(&line, id.as_deref(), what)?;
        Ok(to_query_reply(reply))
    }

    /// Ask a `verify`.
    pub fn verify(
        &mut self,
        request: &VerifyRequest,
        what: &str,
    ) -> Result<Result<VerifyResponse, String>, Broken> {
        let env = Envelope::Verify {
            request: request.clone(),
        };
        let mut line = encode_line(&env).map_err(|e| Broken(e.to_string()))?;
        line.pop();
        Ok(match self.exchange(&line, None, what)? {
            Envelope::Verified { response } => Ok(response),
            Envelope::Error { code, message, .. } => Err(describe_error(code.as_ref(), &message)),
            other => Err(format!("a {} envelope", other.type_name())),
        })
    }

    /// Send every line at once, then collect as many replies (any order,
    /// any id) within one timeout. Fewer replies than lines is not an error
    /// here; the caller judges.
    pub fn burst(&mut self, lines: &[Vec<u8>], what: &str) -> Result<Vec<Envelope>, Broken> {
        for line in lines {
            self.send_raw(line, what)?;
        }
        let deadline = Instant::now() + self.timeout;
        let mut replies = Vec::with_capacity(lines.len());
        while replies.len() < lines.len() {
            match self.next_reply(deadline, what)? {
                Some(r) => replies.push(r),
                None => break,
            }
        }
        Ok(replies)
    }

    /// Send `shutdown` and wait for the process to exit.
    pub fn shutdown(&mut self, grace: Duration) -> ExitOutcome {
        // Sent even on a broken connection: a provider that was merely slow
        // must still be asked to leave rather than just lose its stdin.
        let _ = self.channel.send(br#"{"type":"shutdown"}"#);
        self.channel.wait_exit(grace)
    }

    /// The provider's stderr tail.
    pub fn stderr_tail(&self) -> String {
        self.channel.stderr_tail()
    }
}

/// A reply envelope as a query answer.
pub fn to_query_reply(reply: Envelope) -> QueryReply {
    match reply {
        Envelope::Frames { result, .. } => QueryReply::Frames(result),
        Envelope::Error { code, message, .. } => QueryReply::Error { code, message },
        other => QueryReply::Unexpected(other.type_name().to_owned()),
    }
}
