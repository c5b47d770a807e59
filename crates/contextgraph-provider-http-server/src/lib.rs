//! Serve any Context Graph Protocol provider over HTTP.
//!
//! ```no_run
//! # async fn run<P: contextgraph_provider_sdk::Provider>(provider: P) -> Result<(), Box<dyn std::error::Error>> {
//! use contextgraph_provider_http_server::{HttpServeOptions, HttpServer};
//! let bound = HttpServer::new(provider, HttpServeOptions::default())?
//!     .bind("127.0.0.1:8700".parse()?)
//!     .await?;
//! eprintln!("listening on {}", bound.url()); // http://127.0.0.1:8700/cgp
//! bound.serve(contextgraph_provider_http_server::shutdown_signal()).await;
//! # Ok(()) }
//! ```
//!
//! # The wire (§1)
//!
//! One envelope is the body of a `POST` to the endpoint path (default
//! `/cgp`, `Content-Type: application/json`), and the reply envelope is the
//! response body (`200`, `application/json`). Every protocol outcome,
//! protocol errors included (`bad_request` for invalid JSON, R1), is a 200
//! with an envelope: a host reads non-2xx bodies as transport failures and
//! never parses them. An envelope that calls for no reply (an unknown
//! notification, `shutdown`) gets `204` with an empty body.
//!
//! # Handshake state
//!
//! HTTP has no connection a handshake could belong to: a host's client pools
//! and re-opens connections at will, so the handshake and the next query
//! often travel on different sockets. The server therefore keeps one
//! [`Session`](contextgraph_provider_sdk::Session) for its whole life: a query
//! or verify before any compatible handshake is answered `bad_request`
//! ("handshake first"); after one, the provider is ready for every host the
//! server authenticates. `shutdown` from a host means "no further requests
//! from me" (R2 over HTTP) and is answered 204; the server keeps serving
//! other hosts until its own shutdown signal.
//!
//! # What the HTTP layer enforces, before the session sees a byte
//!
//! In this order, each with an empty body unless noted:
//! - a loopback server answers `421` to a `Host` that is not loopback (a
//!   DNS-rebinding web page cannot read the provider);
//! - `401` (with `WWW-Authenticate: Bearer`) when a token is configured and
//!   the request does not carry it; the comparison is constant-time
//!   ([`AuthToken`]);
//! - `404` for another path, `405` for another method, `415` for a body
//!   that is not `application/json` (a browser cannot send that
//!   cross-origin without a preflight, which is never approved);
//! - `413` for a body over the limit, with a `bad_request` envelope saying
//!   so, the body left unread; `408` when the body does not arrive in time.
//!
//! # Binding (C7, C8)
//!
//! A loopback address needs nothing. Any other address is refused unless
//! the server has both TLS and a token, or
//! [`allow_insecure_public`](HttpServeOptions::allow_insecure_public) is set
//! for a proxy that provides them ([`check_exposure`]).
//!
//! # Concurrency, limits and shutdown
//!
//! Connections are capped ([`max_connections`](HttpServeOptions::max_connections));
//! provider calls run on tokio's blocking pool, at most
//! [`max_in_flight`](HttpServeOptions::max_in_flight) at once for a provider
//! that declared correlation and one at a time (lock-step, as over stdio)
//! for one that did not. When the shutdown future completes the listener
//! closes, idle connections are closed, and in-flight requests get the
//! [`shutdown_grace`](HttpServeOptions::shutdown_grace) to be answered.
//!
//! # Logs (C8)
//!
//! Each request is one `tracing` event at INFO with the provider name,
//! method, status, reply type (and error code), and latency: never a body,
//! a header, the path asked for, or a token. [`StderrLog`] prints them.

#![warn(missing_docs)]

pub mod auth;
pub mod exposure;
mod handler;
pub mod log;
pub mod options;
mod run;
mod server;
pub mod tls;

pub use auth::{AuthToken, TokenError};
pub use exposure::{check_exposure, ExposureError};
pub use log::StderrLog;
pub use options::{HealthProbe, HttpServeOptions, DEFAULT_MAX_BODY_BYTES, DEFAULT_PATH};
pub use run::serve_until_signal;
pub use server::{BoundServer, HttpServeError, HttpServer, ServeSummary};
pub use tls::{TlsError, TlsFiles};

/// Completes on ctrl-c (SIGINT) or, on Unix, SIGTERM: the usual way to ask
/// a server to stop. If a handler cannot be installed, that signal is never
/// awaited (the other still works).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!(signal = "SIGINT", "shutdown requested"),
        () = term => tracing::info!(signal = "SIGTERM", "shutdown requested"),
    }
}
