//! How the server serves: limits, timeouts, credentials, exposure.

use std::time::Duration;

use crate::auth::AuthToken;
use crate::tls::TlsFiles;

/// The path envelopes are POSTed to by default: what `cgp inspect http` and
/// the host's HTTP transport are pointed at (`http://127.0.0.1:8700/cgp`).
pub const DEFAULT_PATH: &str = "/cgp";

/// Default cap on one request body: the codec's stdio line cap (16 MiB), so
/// an envelope that fits one transport fits the other.
pub const DEFAULT_MAX_BODY_BYTES: usize = contextgraph_codec::DEFAULT_MAX_LINE_BYTES;

/// A health probe's answer: whether the server is ready to serve (200,
/// else 503) and the JSON body (`GET /healthz`).
pub type HealthProbe = std::sync::Arc<dyn Fn() -> (bool, String) + Send + Sync>;

/// Options of [`HttpServer`](crate::HttpServer). Build with
/// [`HttpServeOptions::default`] and the `with_*` methods.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpServeOptions {
    /// The one path that accepts envelopes (default [`DEFAULT_PATH`]); any
    /// other path is 404.
    pub path: String,
    /// Require `Authorization: Bearer <token>` on every request (401 otherwise).
    pub token: Option<AuthToken>,
    /// Serve HTTPS with this certificate chain and key.
    pub tls: Option<TlsFiles>,
    /// Allow a non-loopback address without both TLS and a token (default
    /// false). Only for a server behind a proxy that terminates TLS and
    /// authenticates; C7/C8 otherwise forbid it.
    pub allow_insecure_public: bool,
    /// Largest request body (default [`DEFAULT_MAX_BODY_BYTES`]); a larger
    /// one is answered 413 without being read.
    pub max_body_bytes: usize,
    /// Most connections open at once (default 256); further clients wait
    /// in the listen backlog.
    pub max_connections: usize,
    /// Most provider calls running at once for a provider that declared
    /// correlation (default 64). A lock-step provider gets exactly one, as
    /// over stdio, whatever this says.
    pub max_in_flight: usize,
    /// How long a shutdown waits for in-flight requests (default 5 s).
    pub shutdown_grace: Duration,
    /// Longest wait for a request's headers, including the TLS handshake and
    /// an idle keep-alive connection's next request (default 10 s).
    pub header_read_timeout: Duration,
    /// Longest wait for a request's body once its headers arrived (default 30 s).
    pub body_read_timeout: Duration,
    /// Audit every answer before sending it (default true; off only for a
    /// test double that must be able to lie).
    pub enforce_honesty: bool,
    /// Answer `GET /healthz` with this probe (before the token check: a
    /// load balancer's probe carries no credentials, and the body holds
    /// no content). `None`: `/healthz` is 404 like any other path.
    pub health: Option<HealthProbe>,
    /// A replica behind a load balancer: the session is handshaken at
    /// start. A host's handshake reaches one replica and its queries any
    /// of them; every replica would answer the same `handshake_ack`, so a
    /// query reaching one that did not see the handshake is answered,
    /// not refused with "handshake first". Default false.
    pub replica: bool,
}

impl std::fmt::Debug for HttpServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServeOptions")
            .field("path", &self.path)
            .field("token", &self.token)
            .field("tls", &self.tls)
            .field("allow_insecure_public", &self.allow_insecure_public)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_connections", &self.max_connections)
            .field("max_in_flight", &self.max_in_flight)
            .field("health", &self.health.is_some())
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

impl Default for HttpServeOptions {
    fn default() -> Self {
        HttpServeOptions {
            path: DEFAULT_PATH.to_owned(),
            token: None,
            tls: None,
            allow_insecure_public: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: 256,
            max_in_flight: 64,
            shutdown_grace: Duration::from_secs(5),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            enforce_honesty: true,
            health: None,
            replica: false,
        }
    }
}

impl HttpServeOptions {
    /// Require this bearer token.
    #[must_use]
    pub fn with_token(mut self, token: AuthToken) -> Self {
        self.token = Some(token);
        self
    }

    /// Serve HTTPS with these files.
    #[must_use]
    pub fn with_tls(mut self, files: TlsFiles) -> Self {
        self.tls = Some(files);
        self
    }

    /// Set [`max_body_bytes`](Self::max_body_bytes) (at least 1).
    #[must_use]
    pub fn with_max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max.max(1);
        self
    }

    /// Set [`allow_insecure_public`](Self::allow_insecure_public).
    #[must_use]
    pub fn with_insecure_public(mut self, allow: bool) -> Self {
        self.allow_insecure_public = allow;
        self
    }

    /// Set [`shutdown_grace`](Self::shutdown_grace).
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Set [`max_in_flight`](Self::max_in_flight) (at least 1).
    #[must_use]
    pub fn with_max_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max.max(1);
        self
    }

    /// Set [`max_connections`](Self::max_connections) (at least 1).
    #[must_use]
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// Set [`enforce_honesty`](Self::enforce_honesty).
    #[must_use]
    pub fn with_honesty(mut self, enforce: bool) -> Self {
        self.enforce_honesty = enforce;
        self
    }

    /// Set [`health`](Self::health).
    #[must_use]
    pub fn with_health(mut self, probe: HealthProbe) -> Self {
        self.health = Some(probe);
        self
    }

    /// Set [`replica`](Self::replica).
    #[must_use]
    pub fn with_replica(mut self, replica: bool) -> Self {
        self.replica = replica;
        self
    }

    /// Set [`path`](Self::path) (a leading `/` is added when missing).
    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }
}
