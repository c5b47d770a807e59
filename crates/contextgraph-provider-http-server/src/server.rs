//! [`HttpServer`]: accept connections, serve requests, shut down gracefully.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use contextgraph_provider_sdk::{Provider, Session};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use crate::exposure::{check_exposure, ExposureError};
use crate::handler::{handle, State};
use crate::options::HttpServeOptions;
use crate::tls::{server_config, TlsError};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpServeError {
    /// C7/C8: a public address without TLS and a token.
    #[error(transparent)]
    Exposure(#[from] ExposureError),
    /// The certificate or key cannot be used.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The async runtime could not be started.
    #[error(
        "cannot start the server's runtime: {source}; the system may be out of threads or memory"
    )]
    Runtime {
        /// Why.
        source: std::io::Error,
    },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}; pick another port (0 lets the system choose) or stop what holds it")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// A provider ready to be served over HTTP. See the crate docs.
pub struct HttpServer<P> {
    session: Arc<Session<P>>,
    options: HttpServeOptions,
    tls: Option<Arc<ServerConfig>>,
}

impl<P> std::fmt::Debug for HttpServer<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("session", &self.session)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<P: Provider> HttpServer<P> {
    /// Wrap `provider`, loading the TLS files if any (no socket yet).
    pub fn new(provider: P, options: HttpServeOptions) -> Result<Self, HttpServeError> {
        let tls = options.tls.as_ref().map(server_config).transpose()?;
        let session = Session::new(provider).enforce_honesty(options.enforce_honesty);
        if options.replica {
            // See `HttpServeOptions::replica`: this server's own handshake,
            // at its own protocol version.
            let hello = format!(
                "{{\"type\":\"handshake\",\"protocol_version\":\"{}\"}}",
                contextgraph_types::PROTOCOL_VERSION
            );
            let _ = session.handle_line(hello.as_bytes());
        }
        if options.enforce_honesty {
            for v in session.self_check() {
                tracing::warn!(provider = %session.info().name, problem = %v, "hosts will refuse or distrust this provider's handshake");
            }
        }
        Ok(HttpServer {
            session: Arc::new(session),
            options,
            tls,
        })
    }

    /// Check the address against the protections (C7/C8) and bind it.
    /// Port 0 picks a free port: read it from [`BoundServer::local_addr`].
    pub async fn bind(self, addr: SocketAddr) -> Result<BoundServer<P>, HttpServeError> {
        check_exposure(
            addr,
            self.tls.is_some(),
            self.options.token.is_some(),
            self.options.allow_insecure_public,
        )?;
        let bind_error = |source| HttpServeError::Bind { addr, source };
        let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
        let local_addr = listener.local_addr().map_err(bind_error)?;
        Ok(BoundServer {
            server: self,
            listener,
            local_addr,
        })
    }
}

/// A server with its socket bound; [`serve`](Self::serve) runs it.
pub struct BoundServer<P> {
    server: HttpServer<P>,
    listener: TcpListener,
    local_addr: SocketAddr,
}

impl<P> std::fmt::Debug for BoundServer<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

/// How serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeSummary {
    /// Connections accepted.
    pub connections: u64,
    /// Connections still busy when the shutdown grace ran out (cut off).
    pub abandoned: usize,
}

impl<P: Provider> BoundServer<P> {
    /// The address actually bound (the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL hosts POST envelopes to, e.g. `http://127.0.0.1:8700/cgp`.
    pub fn url(&self) -> String {
        let scheme = if self.server.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}{}", self.local_addr, self.server.options.path)
    }

    /// Serve until `shutdown` completes, then stop accepting, let in-flight
    /// requests finish (idle keep-alive connections are closed at once) for
    /// up to the shutdown grace, and return.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> ServeSummary {
        let BoundServer {
            server,
            listener,
            local_addr,
        } = self;
        let options = &server.options;
        let provider = server.session.info().name.clone();
        let lanes = if server.session.capabilities().correlation {
            options.max_in_flight.max(1)
        } else {
            1
        };
        let state = Arc::new(State {
            session: Arc::clone(&server.session),
            provider: provider.clone(),
            path: options.path.clone(),
            token: options.token.clone(),
            loopback_only: local_addr.ip().is_loopback(),
            max_body_bytes: options.max_body_bytes,
            body_read_timeout: options.body_read_timeout,
            work: Arc::new(Semaphore::new(lanes)),
            health: options.health.clone(),
        });
        let acceptor = server.tls.clone().map(TlsAcceptor::from);
        let slots = Arc::new(Semaphore::new(options.max_connections.max(1)));
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut tasks = JoinSet::new();
        let mut connections = 0u64;
        tracing::info!(provider = %provider, addr = %local_addr, tls = acceptor.is_some(), auth = options.token.is_some(), "listening");
        tokio::pin!(shutdown);
        loop {
            while tasks.try_join_next().is_some() {}
            let slot = tokio::select! {
                () = &mut shutdown => break,
                slot = Arc::clone(&slots).acquire_owned() => match slot {
                    Ok(slot) => slot,
                    Err(_) => break,
                },
            };
            let (stream, _peer) = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        // Typically out of file descriptors: back off a
                        // moment instead of spinning on the error.
                        tracing::warn!(provider = %provider, error = %e, "accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            connections += 1;
            tasks.spawn(connection(
                stream,
                acceptor.clone(),
                Arc::clone(&state),
                stop_rx.clone(),
                slot,
                options.header_read_timeout,
            ));
        }
        drop(listener);
        let _ = stop_tx.send(true);
        let busy = tasks.len();
        tracing::info!(provider = %provider, connections = busy, grace_ms = u64::try_from(options.shutdown_grace.as_millis()).unwrap_or(u64::MAX), "shutting down");
        let deadline = Instant::now() + options.shutdown_grace;
        let mut abandoned = 0;
        loop {
            match tokio::time::timeout_at(deadline, tasks.join_next()).await {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => {
                    abandoned = tasks.len();
                    tasks.abort_all();
                    tracing::warn!(provider = %provider, abandoned, "shutdown grace ran out; connections cut off");
                    break;
                }
            }
        }
        tracing::info!(provider = %provider, "stopped");
        ServeSummary {
            connections,
            abandoned,
        }
    }
}

async fn connection<P: Provider>(
    stream: TcpStream,
    acceptor: Option<TlsAcceptor>,
    state: Arc<State<P>>,
    stop: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
    header_timeout: std::time::Duration,
) {
    let _ = stream.set_nodelay(true);
    match acceptor {
        None => serve_connection(TokioIo::new(stream), state, stop, header_timeout).await,
        Some(acceptor) => {
            match tokio::time::timeout(header_timeout, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => {
                    serve_connection(TokioIo::new(tls), state, stop, header_timeout).await
                }
                Ok(Err(e)) => {
                    tracing::debug!(provider = %state.provider, error = %e, "TLS handshake failed")
                }
                Err(_) => tracing::debug!(provider = %state.provider, "TLS handshake timed out"),
            }
        }
    }
}

async fn serve_connection<P, I>(
    io: I,
    state: Arc<State<P>>,
    mut stop: watch::Receiver<bool>,
    header_timeout: std::time::Duration,
) where
    P: Provider,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = service_fn(move |req| {
        let state = Arc::clone(&state);
        async move { Ok::<_, Infallible>(handle(state, req).await) }
    });
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|stopped| *stopped) => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}
