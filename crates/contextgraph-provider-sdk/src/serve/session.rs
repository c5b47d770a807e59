//! [`Session`]: the protocol logic of one connection, free of any transport.
//!
//! The stdio runner ([`serve`](super::serve)) reads lines, asks the session
//! what each means ([`Session::dispatch_line`]), and either writes the
//! immediate reply or hands the resulting [`Job`] to a worker. An HTTP server
//! (one envelope per POST body) uses the very same logic through
//! [`Session::handle_line`], which runs any job inline and returns the one
//! reply, so both transports answer every input identically.

use std::any::Any;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use contextgraph_codec::{decode_envelope, Envelope};
use contextgraph_types::display_text::bounded;
use contextgraph_types::{
    protocol_family, validate, versions_compatible, Capabilities, ContextQuery, ErrorCode,
    ProviderInfo, VerifyRequest, Violation, PROTOCOL_VERSION,
};

use crate::digest_memo::{self, MemoHasher};
use crate::honesty::{audit_answer_hashing, audit_verdicts, complete_verdicts};
use crate::pack::check_embedding;
use crate::provider::{Provider, ProviderError};

/// Longest runner-written error message, in characters (so at most 8 KiB).
/// Messages quote peer input (a version string, a type name, a parser's
/// complaint about a value); a peer must not be able to make the reply as
/// large as its request, nor put control or bidi characters in it.
const MAX_MESSAGE_CHARS: usize = 2048;

/// How many violations an honesty-guard error lists before summarising.
const MAX_LISTED_VIOLATIONS: usize = 16;

/// How many violations the guard writes to stderr, with their full
/// messages, before summarising (an answer of 10,000 bad frames must not
/// flood the log).
const MAX_LOGGED_VIOLATIONS: usize = 64;

/// What one incoming envelope calls for.
#[derive(Debug)]
#[non_exhaustive]
pub enum Dispatch {
    /// Send this reply now (handshake ack, or an error found without calling
    /// the provider).
    Reply(Envelope),
    /// Call the provider: run the job with [`Session::run`] (on a worker, when
    /// the provider declared correlation) and send the envelope it returns.
    Run(Job),
    /// Nothing to send: an incoming `error`, or an unknown notification (§1).
    Ignore,
    /// The host asked for teardown (R2): stop reading, finish in-flight
    /// work, flush.
    Shutdown,
}

/// Provider work that a dispatched envelope calls for, validated and ready
/// to run. Opaque: pass it to [`Session::run`].
#[derive(Debug)]
pub struct Job {
    reply_id: Option<String>,
    work: Work,
}

#[derive(Debug)]
enum Work {
    Query(ContextQuery),
    Verify(VerifyRequest),
}

impl Job {
    /// The `id` the reply will carry (H4; always `None` for a provider that
    /// did not declare correlation).
    pub fn reply_id(&self) -> Option<&str> {
        self.reply_id.as_deref()
    }

    /// The request type, `query` or `verify`, for diagnostics.
    pub fn type_name(&self) -> &'static str {
        match self.work {
            Work::Query(_) => "query",
            Work::Verify(_) => "verify",
        }
    }
}

/// The protocol state and rules of one connection to one provider.
///
/// `Session` is `Sync`: every method takes `&self`, the only state (whether
/// the handshake succeeded) is atomic, so workers can [`run`](Self::run)
/// jobs concurrently and an HTTP server can share one session between
/// request threads.
///
/// The provider's `info()` and `capabilities()` are read once, here: what
/// the host was told at the handshake is exactly what the session enforces
/// (correlation, verify gating, the E1 dimension), for the whole session.
pub struct Session<P> {
    provider: P,
    info: ProviderInfo,
    capabilities: Capabilities,
    enforce_honesty: bool,
    handshaken: AtomicBool,
}

impl<P> std::fmt::Debug for Session<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("provider", &self.info.name)
            .field("enforce_honesty", &self.enforce_honesty)
            .field("handshaken", &self.handshaken.load(Ordering::Acquire))
            .finish_non_exhaustive()
    }
}

impl<P: Provider> Session<P> {
    /// A session for `provider`, honesty guard on, handshake not yet done.
    pub fn new(provider: P) -> Self {
        let info = provider.info();
        let capabilities = provider.capabilities();
        Session {
            provider,
            info,
            capabilities,
            enforce_honesty: true,
            handshaken: AtomicBool::new(false),
        }
    }

    /// Turn the honesty guard on (the default) or off. Off is for test
    /// providers that must be able to lie, such as the conformance suite's
    /// misbehaving provider; a real provider keeps it on.
    #[must_use]
    pub fn enforce_honesty(mut self, enforce: bool) -> Self {
        self.enforce_honesty = enforce;
        self
    }

    /// The provider served.
    pub fn provider(&self) -> &P {
        &self.provider
    }

    /// The identity sent in the `handshake_ack`.
    pub fn info(&self) -> &ProviderInfo {
        &self.info
    }

    /// The capabilities sent in the `handshake_ack` and enforced.
    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// Whether a compatible handshake has been answered (no query payload
    /// is accepted before).
    pub fn is_handshaken(&self) -> bool {
        self.handshaken.load(Ordering::Acquire)
    }

    /// Problems in what this provider would announce at the handshake (H2,
    /// C5, the resolve rule, E1 grammar): a host will refuse or distrust a
    /// provider with any. The stdio runner prints them to stderr at start.
    pub fn self_check(&self) -> Vec<Violation> {
        validate::handshake_ack(
            PROTOCOL_VERSION,
            &self.info,
            &self.capabilities,
            PROTOCOL_VERSION,
        )
    }

    /// The one reply to one envelope line, running any provider work inline.
    /// `None` when nothing is to be sent (an ignored notification, an
    /// incoming `error`, or `shutdown` — check [`dispatch_line`](Self::dispatch_line)
    /// directly when the difference matters).
    ///
    /// This is the entry point for transports with one request per message,
    /// such as HTTP (one envelope per POST body).
    pub fn handle_line(&self, line: &[u8]) -> Option<Envelope> {
        match self.dispatch_line(line) {
            Dispatch::Reply(reply) => Some(reply),
            Dispatch::Run(job) => Some(self.run(job)),
            Dispatch::Ignore | Dispatch::Shutdown => None,
        }
    }

    /// What one line means. A line that is not an envelope gets a
    /// `bad_request` naming the fault (R1), with the request `id` when one
    /// could be recovered and the provider declared correlation.
    pub fn dispatch_line(&self, line: &[u8]) -> Dispatch {
        match decode_envelope(line) {
            Ok(envelope) => self.dispatch(envelope),
            Err(e) => {
                let id = self.reply_id(e.id().map(str::to_owned));
                Dispatch::Reply(self.bad_request(
                    id,
                    format!("R1: {e}; send one JSON envelope object per line"),
                ))
            }
        }
    }

    /// What one decoded envelope means.
    pub fn dispatch(&self, envelope: Envelope) -> Dispatch {
        match envelope {
            Envelope::Handshake { protocol_version } => {
                Dispatch::Reply(self.handshake(&protocol_version))
            }
            Envelope::Query { id, query } => {
                let id = self.reply_id(id);
                if !self.is_handshaken() {
                    return Dispatch::Reply(self.handshake_first(id, "query"));
                }
                match self.query_problems(&query) {
                    Some(problems) => Dispatch::Reply(self.bad_request(id, problems)),
                    None => Dispatch::Run(Job {
                        reply_id: id,
                        work: Work::Query(query),
                    }),
                }
            }
            Envelope::Verify { request } => {
                if !self.is_handshaken() {
                    Dispatch::Reply(self.handshake_first(None, "verify"))
                } else if !self.capabilities.verify {
                    Dispatch::Reply(self.bad_request(
                        None,
                        "V2: this provider does not verify (capabilities.verify is false); re-query instead",
                    ))
                } else if let Err(limit) = contextgraph_types::limits::check_verify(&request) {
                    Dispatch::Reply(self.bad_request(None, format!("verify over a limit: {limit}")))
                } else {
                    Dispatch::Run(Job {
                        reply_id: None,
                        work: Work::Verify(request),
                    })
                }
            }
            Envelope::Shutdown => Dispatch::Shutdown,
            Envelope::Error { .. } => Dispatch::Ignore,
            Envelope::HandshakeAck { .. } | Envelope::Frames { .. } | Envelope::Verified { .. } => {
                let id = self.reply_id(envelope.correlation_id().map(str::to_owned));
                let type_name = envelope.type_name().to_owned();
                Dispatch::Reply(self.bad_request(
                    id,
                    format!("{type_name} is sent by a provider to a host, not to a provider; send handshake, query, verify or shutdown"),
                ))
            }
            Envelope::Unknown {
                type_name,
                id: Some(id),
            } => Dispatch::Reply(self.bad_request(
                self.reply_id(Some(id)),
                format!(
                    "unknown envelope type {:?}; this provider serves handshake, query, verify and shutdown",
                    bounded(&type_name, 64)
                ),
            )),
            // §1: an unknown notification (no id) is ignored.
            Envelope::Unknown { id: None, .. } => Dispatch::Ignore,
        }
    }

    /// The reply to a line that was longer than the transport's cap and was
    /// dropped unread (R1: answered, and the connection stays usable).
    pub fn oversized_line(&self, discarded_bytes: u64, max_line_bytes: usize) -> Envelope {
        self.bad_request(
            None,
            format!("R1: a line of {discarded_bytes} bytes exceeds this provider's {max_line_bytes}-byte line limit and was discarded; send smaller envelopes"),
        )
    }

    /// Run provider work and build its reply. Never panics on the provider's
    /// behalf: a panic inside `query`/`verify` is caught and answered as
    /// `internal`, so the session survives it.
    pub fn run(&self, job: Job) -> Envelope {
        let id = job.reply_id;
        match job.work {
            Work::Query(query) => self.run_query(id, &query),
            Work::Verify(request) => self.run_verify(&request),
        }
    }

    fn run_query(&self, id: Option<String>, query: &ContextQuery) -> Envelope {
        // Digests the SDK computes while the provider answers on this
        // thread are kept for the audit below, which reuses one only for
        // bytes equal to those it was computed over (see `digest_memo`).
        let _digests = digest_memo::Scope::open();
        let answer = match catch_unwind(AssertUnwindSafe(|| self.provider.query(query))) {
            Ok(answer) => answer,
            Err(payload) => return self.panicked(id, "query", payload.as_ref()),
        };
        let result = match answer {
            Ok(result) => result,
            Err(e) => return provider_error(id, e),
        };
        if self.enforce_honesty {
            let violations = audit_answer_hashing(query, &result, &self.capabilities, &MemoHasher);
            if !violations.is_empty() {
                return self.dishonest(id, "frames", &violations);
            }
        }
        Envelope::Frames { id, result }
    }

    fn run_verify(&self, request: &VerifyRequest) -> Envelope {
        let response = match catch_unwind(AssertUnwindSafe(|| self.provider.verify(request))) {
            Ok(response) => response,
            Err(payload) => return self.panicked(None, "verify", payload.as_ref()),
        };
        let response = complete_verdicts(request, response);
        if self.enforce_honesty {
            let violations = audit_verdicts(&response);
            if !violations.is_empty() {
                return self.dishonest(None, "verdicts", &violations);
            }
        }
        Envelope::Verified { response }
    }

    fn handshake(&self, host_version: &str) -> Envelope {
        if versions_compatible(host_version, PROTOCOL_VERSION) {
            self.handshaken.store(true, Ordering::Release);
            return Envelope::HandshakeAck {
                protocol_version: PROTOCOL_VERSION.to_owned(),
                provider: self.info.clone(),
                capabilities: self.capabilities.clone(),
            };
        }
        let ours = protocol_family(PROTOCOL_VERSION).unwrap_or(PROTOCOL_VERSION);
        let theirs = match protocol_family(host_version) {
            Some(family) => format!("the host speaks family {family} ({host_version})"),
            None => format!(
                "the host's version {:?} is not a protocol version (contextgraph/<major>.<minor>[-draft]) and so belongs to no family",
                bounded(host_version, 64)
            ),
        };
        Envelope::error(
            None,
            ErrorCode::IncompatibleVersion,
            self.message(format!(
                "H3: {theirs}, but this provider speaks family {ours} ({PROTOCOL_VERSION}); handshake again with a {ours}.x version or use another provider"
            )),
        )
    }

    /// The query's own faults (shape, F4 `as_of`, E1), or `None`.
    fn query_problems(&self, query: &ContextQuery) -> Option<String> {
        // Bounded work first: an oversized request costs no more than
        // reading it (`contextgraph_types::limits`).
        if let Err(limit) = contextgraph_types::limits::check_query(query) {
            return Some(format!("query over a limit: {limit}"));
        }
        let mut problems: Vec<String> = query.validate().iter().map(ToString::to_string).collect();
        if let Err(e) = check_embedding(query, self.capabilities.embeddings_fingerprint.as_deref())
        {
            problems.push(e.message);
        }
        (!problems.is_empty()).then(|| format!("invalid query: {}", problems.join("; ")))
    }

    fn handshake_first(&self, id: Option<String>, type_name: &str) -> Envelope {
        self.bad_request(
            id,
            format!("{type_name} before the handshake: handshake first (no query payload moves before a handshake_ack)"),
        )
    }

    fn panicked(&self, id: Option<String>, what: &str, payload: &(dyn Any + Send)) -> Envelope {
        let detail = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message");
        diag!("{}: {what} handler panicked: {detail}", self.info.name);
        Envelope::error(
            id,
            ErrorCode::Internal,
            self.message(format!(
                "the {what} handler panicked ({}); this is a provider bug, report it to the provider's author",
                bounded(detail, 256)
            )),
        )
    }

    fn dishonest(&self, id: Option<String>, what: &str, violations: &[Violation]) -> Envelope {
        diag!(
            "{}: honesty guard withheld {what} breaking {} rule(s):",
            self.info.name,
            violations.len()
        );
        for v in violations.iter().take(MAX_LOGGED_VIOLATIONS) {
            diag!("  {v}");
        }
        if violations.len() > MAX_LOGGED_VIOLATIONS {
            diag!("  … and {} more", violations.len() - MAX_LOGGED_VIOLATIONS);
        }
        let mut listed = String::new();
        for (i, v) in violations.iter().take(MAX_LISTED_VIOLATIONS).enumerate() {
            if i > 0 {
                listed.push_str(", ");
            }
            let _ = write!(listed, "{} at {}", v.anchor, v.path);
        }
        if violations.len() > MAX_LISTED_VIOLATIONS {
            let _ = write!(
                listed,
                " and {} more",
                violations.len() - MAX_LISTED_VIOLATIONS
            );
        }
        Envelope::error(
            id,
            ErrorCode::Internal,
            self.message(format!(
                "honesty guard withheld dishonest {what} ({listed}); this is a provider bug, see the provider's stderr for details"
            )),
        )
    }

    fn bad_request(&self, id: Option<String>, message: impl AsRef<str>) -> Envelope {
        Envelope::error(id, ErrorCode::BadRequest, self.message(message))
    }

    /// A runner-written message: prefixed with the provider name (so a host
    /// log line says who complained) and bounded in size.
    fn message(&self, text: impl AsRef<str>) -> String {
        let full = format!("{}: {}", self.info.name, text.as_ref());
        bounded(&full, MAX_MESSAGE_CHARS)
    }

    /// H4: echo the request id only when correlation was declared; a
    /// lock-step provider's replies carry none.
    fn reply_id(&self, id: Option<String>) -> Option<String> {
        if self.capabilities.correlation {
            id
        } else {
            None
        }
    }
}

/// A provider's own error, sent as it is; an empty message is replaced,
/// because a message is required and is what a person reads.
fn provider_error(id: Option<String>, e: ProviderError) -> Envelope {
    let message = if e.message.trim().is_empty() {
        format!("the provider failed with {} and gave no message", e.code)
    } else {
        e.message
    };
    Envelope::error(id, e.code, message)
}
