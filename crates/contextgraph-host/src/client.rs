//! One trait over every way of reaching a provider ([`ProviderClient`]), and
//! the stdio implementation with crash reports and respawn.
//!
//! The split between [`ProviderClient::ready`] and [`ProviderClient::query`]
//! is deliberate: `ready` (connect, spawn, respawn, handshake) moves no
//! payload, so the host can check consent against the descriptor it returns
//! before anything is sent; `query` never respawns, so a provider that comes
//! back as another version can never receive a payload unchecked (C6).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use contextgraph_types::{ContextQuery, VerifyRequest};
use tokio::time::Instant;

use crate::connection::{Answer, CloseReason, Connection, ConnectionError, ConnectionOptions};
use crate::handshake::{HandshakeError, ProviderDescriptor, TransportKind};
use crate::transport::stdio::{describe_exit, ChildProcess, StdioCommand};

/// A boxed, sendable future (the trait is object-safe so a host can hold
/// stdio, HTTP and in-process providers side by side).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a request to a provider did not produce an answer. Every variant names
/// the provider.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The session failed the request (timeout, H4, malformed reply, …).
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The provider process died.
    #[error("provider {provider}: crashed ({status}); stderr tail: {stderr_tail:?}; it will be respawned on a later request if respawn is enabled")]
    Crashed {
        /// The provider.
        provider: String,
        /// How it ended.
        status: String,
        /// The end of its stderr.
        stderr_tail: String,
    },
    /// Connecting or (re)spawning failed at the handshake.
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    /// The program could not be started.
    #[error(
        "provider {provider}: could not start {program}: {detail}; check the path and permissions"
    )]
    Spawn {
        /// The provider.
        provider: String,
        /// The program.
        program: String,
        /// The OS error.
        detail: String,
    },
    /// A respawned provider reported another identity, version, data flow or
    /// capabilities than the one the host accepted; it needs a new grant (C6).
    #[error("provider {provider}: C6: came back as {now} after a restart (was {was}); re-add it so its consent is checked again")]
    IdentityChanged {
        /// The provider.
        provider: String,
        /// Name and version before.
        was: String,
        /// Name and version now.
        now: String,
    },
    /// The provider crashed recently and is in its respawn backoff.
    #[error("provider {provider}: crashed recently; next restart allowed in {retry_in_ms} ms")]
    Backoff {
        /// The provider.
        provider: String,
        /// Time left.
        retry_in_ms: u128,
    },
    /// The provider is down and the embedder disabled respawn.
    #[error("provider {provider}: down ({last}); respawn is disabled for it")]
    Down {
        /// The provider.
        provider: String,
        /// The last failure.
        last: String,
    },
    /// The HTTP transport failed (never carries a credential or a response body, C8).
    #[error(transparent)]
    Http(#[from] crate::transport::http::HttpError),
    /// An in-process provider panicked or could not be run.
    #[error("provider {provider}: in-process call failed: {detail}")]
    InProcess {
        /// The provider.
        provider: String,
        /// What happened.
        detail: String,
    },
    /// The deadline passed before the request could be sent.
    #[error("provider {provider}: the deadline passed before the request could be sent")]
    DeadlinePassed {
        /// The provider.
        provider: String,
    },
}

impl RequestError {
    /// Whether this is a timeout of any layer.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            RequestError::Connection(ConnectionError::Timeout { .. })
                | RequestError::DeadlinePassed { .. }
                | RequestError::Handshake(HandshakeError::Timeout { .. })
        ) || matches!(self, RequestError::Http(e) if e.is_timeout())
    }
}

/// A provider, however it is reached.
pub trait ProviderClient: Send + Sync {
    /// A label for errors before the provider has told its name.
    fn label(&self) -> String;

    /// Connect (spawn, respawn within its backoff, handshake) if needed and
    /// return what the provider declared. Moves no query payload.
    fn ready(
        &self,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Arc<ProviderDescriptor>, RequestError>>;

    /// Send a query to the connected provider and wait for its answer.
    /// Never (re)spawns: call [`ready`](Self::ready) first.
    fn query<'a>(
        &'a self,
        query: &'a ContextQuery,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>>;

    /// Send a `verify` to the connected provider (identities only, V1).
    fn verify<'a>(
        &'a self,
        request: &'a VerifyRequest,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>>;

    /// Tear the provider down (R2: `shutdown`, then a kill after a grace period).
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

/// When a crashed stdio provider may be started again.
#[derive(Debug, Clone)]
pub struct RespawnPolicy {
    /// Whether to respawn at all (default true).
    pub enabled: bool,
    /// Wait after the first crash (default 50 ms); doubled for each further
    /// crash without a successful answer in between.
    pub initial_backoff: Duration,
    /// Longest wait (default 5 s).
    pub max_backoff: Duration,
}

impl Default for RespawnPolicy {
    fn default() -> Self {
        RespawnPolicy {
            enabled: true,
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl RespawnPolicy {
    fn backoff(&self, failures: u32) -> Duration {
        let shift = failures.saturating_sub(1).min(20);
        self.initial_backoff
            .saturating_mul(1u32 << shift)
            .min(self.max_backoff)
    }
}

/// Options of a stdio provider.
#[derive(Debug, Clone, Default)]
pub struct StdioOptions {
    /// Session bounds (line cap, in-flight limit, handshake timeout).
    pub connection: ConnectionOptions,
    /// Respawn after a crash.
    pub respawn: RespawnPolicy,
    /// How long `shutdown` waits for a clean exit before killing the group
    /// (default 0 means 500 ms).
    pub shutdown_grace: Duration,
}

/// A request, so one code path serves queries and verifies.
#[derive(Clone, Copy)]
enum Op<'a> {
    Query(&'a ContextQuery),
    Verify(&'a VerifyRequest),
}

impl Op<'_> {
    async fn send(self, conn: &Connection, deadline: Instant) -> Result<Answer, ConnectionError> {
        match self {
            Op::Query(q) => conn.query(q, deadline).await,
            Op::Verify(v) => conn.verify(v, deadline).await,
        }
    }
}

struct Live {
    conn: Connection,
    process: ChildProcess,
    descriptor: Arc<ProviderDescriptor>,
}

#[derive(Default)]
struct State {
    live: Option<Arc<Live>>,
    accepted: Option<Arc<ProviderDescriptor>>,
    failures: u32,
    next_spawn_at: Option<Instant>,
    last_failure: Option<String>,
    started_once: bool,
}

/// A provider run as a child process speaking NDJSON on stdio.
pub struct StdioProvider {
    command: StdioCommand,
    options: StdioOptions,
    state: Mutex<State>,
    spawning: tokio::sync::Mutex<()>,
    /// Set while failures are on record, so a successful request (the
    /// pipelined hot path) resets the backoff without taking the state lock.
    failed: AtomicBool,
}

impl std::fmt::Debug for StdioProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioProvider")
            .field("program", &self.command.program)
            .finish_non_exhaustive()
    }
}

impl StdioProvider {
    /// A provider started from `command` on first use.
    pub fn new(command: StdioCommand, options: StdioOptions) -> Self {
        StdioProvider {
            command,
            options,
            state: Mutex::new(State::default()),
            spawning: tokio::sync::Mutex::new(()),
            failed: AtomicBool::new(false),
        }
    }

    /// Start it now and handshake (instead of on first use).
    pub async fn start(
        command: StdioCommand,
        options: StdioOptions,
    ) -> Result<(Self, Arc<ProviderDescriptor>), RequestError> {
        let timeout = options.connection.handshake_timeout;
        let provider = Self::new(command, options);
        let descriptor = provider.ready(Instant::now() + timeout).await?;
        Ok((provider, descriptor))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The provider process id, while one runs (for tests and diagnostics).
    pub fn pid(&self) -> Option<u32> {
        self.lock().live.as_ref().and_then(|l| l.process.id())
    }

    /// The connection's diagnostics (noise seen on the wire), while connected.
    pub fn diagnostics(&self) -> Option<crate::connection::Diagnostics> {
        self.lock().live.as_ref().map(|l| l.conn.diagnostics())
    }

    fn provider_name(&self) -> String {
        let s = self.lock();
        s.accepted
            .as_ref()
            .map(|d| d.id.clone())
            .unwrap_or_else(|| self.command.label())
    }

    fn live(&self) -> Result<Arc<Live>, RequestError> {
        let s = self.lock();
        match &s.live {
            Some(l) => Ok(Arc::clone(l)),
            None => Err(RequestError::Down {
                provider: self.provider_name_locked(&s),
                last: s
                    .last_failure
                    .clone()
                    .unwrap_or_else(|| "not started; call ready() first".to_owned()),
            }),
        }
    }

    fn provider_name_locked(&self, s: &State) -> String {
        s.accepted
            .as_ref()
            .map(|d| d.id.clone())
            .unwrap_or_else(|| self.command.label())
    }

    async fn spawn(&self, deadline: Instant) -> Result<Arc<ProviderDescriptor>, RequestError> {
        let label = self.command.label();
        let (process, stdin, stdout) = self.command.spawn().map_err(|e| RequestError::Spawn {
            provider: self.provider_name(),
            program: label.clone(),
            detail: e.to_string(),
        })?;
        let mut options = self.options.connection.clone();
        let left = deadline.saturating_duration_since(Instant::now());
        options.handshake_timeout = options.handshake_timeout.min(left);
        let transport = TransportKind::Stdio {
            program: label.clone(),
        };
        let conn = match Connection::open(stdout, stdin, &label, transport, options).await {
            Ok(conn) => conn,
            Err(mut e) => {
                if let HandshakeError::Closed { stderr_tail, .. }
                | HandshakeError::Timeout { stderr_tail, .. } = &mut e
                {
                    process
                        .stderr_tail()
                        .wait_closed(Instant::now() + Duration::from_millis(100))
                        .await;
                    *stderr_tail = process.stderr_tail().text();
                }
                process.kill();
                return Err(e.into());
            }
        };
        let descriptor = Arc::new(conn.descriptor().clone());
        let mut s = self.lock();
        if let Some(accepted) = &s.accepted {
            if !accepted.same_identity(&descriptor) {
                let e = RequestError::IdentityChanged {
                    provider: accepted.id.clone(),
                    was: format!("{} {}", accepted.info.name, accepted.info.version),
                    now: format!("{} {}", descriptor.info.name, descriptor.info.version),
                };
                drop(s);
                process.kill();
                return Err(e);
            }
        } else {
            s.accepted = Some(Arc::clone(&descriptor));
        }
        s.live = Some(Arc::new(Live {
            conn,
            process,
            descriptor: Arc::clone(&descriptor),
        }));
        Ok(descriptor)
    }

    /// Record a failure of `live` and retire it, returning the error to report.
    async fn retire(&self, live: &Arc<Live>, error: ConnectionError) -> RequestError {
        let crashed = matches!(
            error,
            ConnectionError::Closed {
                reason: CloseReason::EndOfOutput | CloseReason::Io(_),
                ..
            }
        );
        let report = if crashed {
            let soon = Instant::now() + Duration::from_millis(200);
            let status = live.process.exit_status(soon).await;
            live.process.stderr_tail().wait_closed(soon).await;
            RequestError::Crashed {
                provider: live.conn.descriptor().id.clone(),
                status: describe_exit(status),
                stderr_tail: live.process.stderr_tail().text(),
            }
        } else {
            RequestError::Connection(error)
        };
        live.process.kill();
        let mut s = self.lock();
        if s.live.as_ref().is_some_and(|l| Arc::ptr_eq(l, live)) {
            s.live = None;
            self.failed.store(true, Ordering::Release);
            s.failures = s.failures.saturating_add(1);
            s.next_spawn_at = Some(Instant::now() + self.options.respawn.backoff(s.failures));
            s.last_failure = Some(report.to_string());
        }
        report
    }

    fn succeeded(&self) {
        if !self.failed.load(Ordering::Acquire) {
            return;
        }
        let mut s = self.lock();
        s.failures = 0;
        s.next_spawn_at = None;
        self.failed.store(false, Ordering::Release);
    }

    async fn request(&self, deadline: Instant, op: Op<'_>) -> Result<Answer, RequestError> {
        let live = self.live()?;
        match op.send(&live.conn, deadline).await {
            Ok(answer) => {
                self.succeeded();
                Ok(answer)
            }
            Err(ConnectionError::Timeout { provider, after_ms }) => {
                Err(ConnectionError::Timeout { provider, after_ms }.into())
            }
            Err(e @ ConnectionError::Desynchronised { .. }) => {
                // Restart once and retry on a fresh session: the stale reply
                // died with the old process, so nothing can be misattributed.
                let report = self.retire(&live, e).await;
                if Instant::now() >= deadline {
                    return Err(report);
                }
                let _guard = self.spawning.lock().await;
                self.lock().next_spawn_at = None;
                self.spawn(deadline).await?;
                let live = self.live()?;
                let answer = op.send(&live.conn, deadline).await;
                match answer {
                    Ok(a) => {
                        self.succeeded();
                        Ok(a)
                    }
                    Err(e @ ConnectionError::Timeout { .. }) => Err(e.into()),
                    Err(e) => Err(self.retire(&live, e).await),
                }
            }
            Err(e) => Err(self.retire(&live, e).await),
        }
    }
}

impl ProviderClient for StdioProvider {
    fn label(&self) -> String {
        self.provider_name()
    }

    fn ready(
        &self,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Arc<ProviderDescriptor>, RequestError>> {
        Box::pin(async move {
            // Fast path, the common case on every fan-out: connected and
            // open, so no spawn lock is needed.
            if let Some(live) = &self.lock().live {
                if live.conn.closed().is_none() {
                    return Ok(Arc::clone(&live.descriptor));
                }
            }
            let _guard = tokio::time::timeout_at(deadline, self.spawning.lock())
                .await
                .map_err(|_| RequestError::DeadlinePassed {
                    provider: self.provider_name(),
                })?;
            {
                let mut s = self.lock();
                if let Some(live) = &s.live {
                    if live.conn.closed().is_none() {
                        return Ok(Arc::clone(&live.descriptor));
                    }
                }
                if s.started_once {
                    if let Some(live) = s.live.take() {
                        live.process.kill();
                    }
                    if !self.options.respawn.enabled {
                        return Err(RequestError::Down {
                            provider: self.provider_name_locked(&s),
                            last: s.last_failure.clone().unwrap_or_default(),
                        });
                    }
                    if let Some(at) = s.next_spawn_at {
                        let now = Instant::now();
                        if at > now {
                            return Err(RequestError::Backoff {
                                provider: self.provider_name_locked(&s),
                                retry_in_ms: (at - now).as_millis(),
                            });
                        }
                    }
                }
                s.started_once = true;
            }
            match self.spawn(deadline).await {
                Ok(d) => Ok(d),
                Err(e) => {
                    let mut s = self.lock();
                    self.failed.store(true, Ordering::Release);
                    s.failures = s.failures.saturating_add(1);
                    s.next_spawn_at =
                        Some(Instant::now() + self.options.respawn.backoff(s.failures));
                    s.last_failure = Some(e.to_string());
                    Err(e)
                }
            }
        })
    }

    fn query<'a>(
        &'a self,
        query: &'a ContextQuery,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        Box::pin(self.request(deadline, Op::Query(query)))
    }

    fn verify<'a>(
        &'a self,
        request: &'a VerifyRequest,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        Box::pin(self.request(deadline, Op::Verify(request)))
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let live = self.lock().live.take();
            if let Some(live) = live {
                live.conn.shutdown().await;
                let grace = if self.options.shutdown_grace.is_zero() {
                    Duration::from_millis(500)
                } else {
                    self.options.shutdown_grace
                };
                let exited = live.process.exit_status(Instant::now() + grace).await;
                if exited.is_none() {
                    live.process.kill();
                }
            }
        })
    }
}
