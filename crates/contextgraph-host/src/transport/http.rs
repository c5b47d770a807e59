//! HTTP providers: one envelope per POST body, one in the response body (§1).
//!
//! The rules this transport enforces, before any policy layer sees a byte:
//! - **C7**: plaintext `http://` to anything but a loopback address is
//!   refused when the provider is created — before any connection is made.
//! - **C4**: a non-loopback provider is egress whatever its ack claims
//!   (recorded in its [`TransportKind::Http`], read by the consent gate).
//! - **C8**: the bearer token lives in a [`BearerToken`] whose `Debug` and
//!   `Display` are redacted; it is sent only as the `Authorization` header;
//!   URLs carrying credentials are refused; a non-2xx response body is never
//!   read into an error (it may echo the token back).
//! - Redirects are not followed (a redirect is an error naming its status:
//!   following one would send the payload and the token somewhere the
//!   embedder never named); response bodies are capped while streaming;
//!   connect and request timeouts apply; proxies only when opted in.
//!
//! Loopback means an IP literal in `127.0.0.0/8` or `::1`, or the name
//! `localhost`, which is pinned to `127.0.0.1` so that no resolver can move
//! it off the machine. Any other name is treated as remote, even one that
//! happens to resolve to a local address.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use contextgraph_codec::{decode_envelope, Envelope};
use contextgraph_types::{ContextQuery, VerifyRequest, PROTOCOL_VERSION};
use serde::Serialize;
use tokio::time::{timeout_at, Instant};

use crate::client::{BoxFuture, ProviderClient, RequestError};
use crate::connection::{Answer, ConnectionError};
use crate::handshake::{
    check_ack, error_instead_of_ack, HandshakeError, ProviderDescriptor, TransportKind,
};
use contextgraph_types::display_text::{bounded, bounded_bytes};

/// The workspace's one bearer credential (C8), re-exported for embedders.
pub use contextgraph_types::credential::{BearerToken, BearerTokenError};

/// How to reach an HTTP provider.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The endpoint every envelope is POSTed to.
    pub url: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub bearer: Option<BearerToken>,
    /// Bound on establishing a connection (default 5 s).
    pub connect_timeout: Duration,
    /// Bound on one request, response body included (default 30 s; the
    /// caller's deadline applies too).
    pub request_timeout: Duration,
    /// Largest response body accepted (default 16 MiB, like the stdio line cap).
    pub max_body_bytes: usize,
    /// Use the environment's proxy settings (default false: a proxy is a
    /// party the payload would pass through, so the embedder opts in).
    pub use_proxy: bool,
    /// Extra trusted root certificates (PEM), e.g. an organisation's CA.
    pub extra_roots_pem: Vec<Vec<u8>>,
    /// Trust only `extra_roots_pem`, not the bundled web roots (default false).
    pub only_extra_roots: bool,
}

impl HttpConfig {
    /// Defaults for `url`.
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            bearer: None,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            max_body_bytes: contextgraph_codec::DEFAULT_MAX_LINE_BYTES,
            use_proxy: false,
            extra_roots_pem: Vec::new(),
            only_extra_roots: false,
        }
    }
}

/// Why an HTTP exchange failed. Never carries a credential or a response body (C8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// C7: plaintext to a non-loopback host.
    #[error("provider {url}: C7: plaintext HTTP to a non-loopback host is refused (nothing was sent); use https://")]
    PlaintextToRemote {
        /// The URL.
        url: String,
    },
    /// The URL cannot be used.
    #[error("provider {url}: invalid URL: {detail}")]
    InvalidUrl {
        /// The URL, credentials removed.
        url: String,
        /// Why.
        detail: String,
    },
    /// The provider answered with a redirect, which is not followed.
    #[error("provider {url}: answered with redirect status {status}; redirects are not followed — configure the final URL")]
    Redirect {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// The provider answered with another non-2xx status (its body is not read).
    #[error("provider {url}: answered with HTTP status {status}; check the provider's logs (the response body is not shown, C8)")]
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// The response body exceeded the cap.
    #[error("provider {url}: response body exceeds {max} bytes and was dropped")]
    BodyTooLarge {
        /// The URL.
        url: String,
        /// The cap.
        max: usize,
    },
    /// Connecting, TLS, or transfer failed (or timed out).
    #[error("provider {url}: request failed: {detail}")]
    Transport {
        /// The URL.
        url: String,
        /// What failed.
        detail: String,
        /// Whether it was a timeout.
        timeout: bool,
    },
    /// The client could not be built (e.g. a bad root certificate).
    #[error("provider {url}: cannot set up the HTTP client: {detail}")]
    Setup {
        /// The URL.
        url: String,
        /// Why.
        detail: String,
    },
}

impl HttpError {
    /// Whether this is a timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, HttpError::Transport { timeout: true, .. })
    }
}

/// Whether `host` (as in a URL) is a loopback address this transport trusts
/// to stay on the machine: the one rule, in `contextgraph_types::loopback`.
pub use contextgraph_types::loopback::is_loopback_host;

/// The host's client for a provider served over HTTP (C4/C7/C8): it calls a
/// remote provider, it is not one (formerly `HttpProvider`; the server side
/// is `contextgraph-provider-http-server`).
pub struct HttpProviderClient {
    url: reqwest::Url,
    label: String,
    loopback: bool,
    config: HttpConfig,
    client: reqwest::Client,
    descriptor: Mutex<Option<Arc<ProviderDescriptor>>>,
    next: AtomicU64,
}

impl fmt::Debug for HttpProviderClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpProviderClient")
            .field("url", &self.label)
            .field("loopback", &self.loopback)
            .field("bearer", &self.config.bearer)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct Out<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    query: Option<&'a ContextQuery>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<&'a VerifyRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_version: Option<&'static str>,
}

impl HttpProviderClient {
    /// Check the URL (C7, C8) and build the client. Sends nothing.
    pub fn new(config: HttpConfig) -> Result<Self, HttpError> {
        let url = reqwest::Url::parse(&config.url).map_err(|e| HttpError::InvalidUrl {
            url: bounded(&config.url, 200),
            detail: e.to_string(),
        })?;
        let mut shown = url.clone();
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        let label = bounded(shown.as_str(), 200);
        if !url.username().is_empty() || url.password().is_some() {
            return Err(HttpError::InvalidUrl {
                url: label,
                detail:
                    "credentials in the URL would end up in logs (C8); pass a bearer token instead"
                        .into(),
            });
        }
        let host = url.host_str().unwrap_or_default().to_owned();
        let loopback = is_loopback_host(&host);
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            "http" => return Err(HttpError::PlaintextToRemote { url: label }),
            other => {
                return Err(HttpError::InvalidUrl {
                    url: label,
                    detail: format!("scheme {other:?} is not http or https"),
                })
            }
        }
        let setup = |detail: String| HttpError::Setup {
            url: label.clone(),
            detail,
        };
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .use_rustls_tls()
            .tls_built_in_root_certs(!config.only_extra_roots);
        if !config.use_proxy {
            builder = builder.no_proxy();
        }
        if host.eq_ignore_ascii_case("localhost") {
            let port = url.port_or_known_default().unwrap_or(80);
            builder = builder.resolve(
                "localhost",
                SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            );
        }
        for pem in &config.extra_roots_pem {
            let cert = reqwest::Certificate::from_pem(pem).map_err(|e| setup(e.to_string()))?;
            builder = builder.add_root_certificate(cert);
        }
        let client = builder.build().map_err(|e| setup(e.to_string()))?;
        Ok(HttpProviderClient {
            url,
            label,
            loopback,
            config,
            client,
            descriptor: Mutex::new(None),
            next: AtomicU64::new(1),
        })
    }

    /// Whether the endpoint is a loopback address (if not, C4 makes it egress).
    pub fn is_loopback(&self) -> bool {
        self.loopback
    }

    fn transport_error(&self, e: &reqwest::Error) -> HttpError {
        // `without_url`: the URL is named once, by us, credentials removed.
        let timeout = e.is_timeout();
        let mut detail = String::new();
        let mut source: Option<&dyn std::error::Error> = Some(e);
        while let Some(s) = source {
            if !detail.is_empty() {
                detail.push_str(": ");
            }
            detail.push_str(&s.to_string());
            source = s.source();
        }
        let detail = detail.replace(self.url.as_str(), &self.label);
        HttpError::Transport {
            url: self.label.clone(),
            detail: bounded(&detail, 400),
            timeout,
        }
    }

    /// POST one envelope and return the decoded reply envelope.
    async fn exchange(&self, body: Vec<u8>, deadline: Instant) -> Result<Envelope, RequestError> {
        let mut request = self
            .client
            .post(self.url.clone())
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = &self.config.bearer {
            let mut value =
                reqwest::header::HeaderValue::from_str(&format!("Bearer {}", token.expose()))
                    .map_err(|_| HttpError::Setup {
                        url: self.label.clone(),
                        detail: "the bearer token contains characters not allowed in a header"
                            .into(),
                    })?;
            value.set_sensitive(true);
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        let started = Instant::now();
        let timed_out = || -> RequestError {
            ConnectionError::Timeout {
                provider: self.label.clone(),
                after_ms: started.elapsed().as_millis(),
            }
            .into()
        };
        let bytes = timeout_at(deadline, async {
            let mut response = request.send().await.map_err(|e| self.transport_error(&e))?;
            let status = response.status();
            if status.is_redirection() {
                return Err(HttpError::Redirect {
                    url: self.label.clone(),
                    status: status.as_u16(),
                });
            }
            if !status.is_success() {
                // The body is dropped unread: it may echo credentials (C8).
                return Err(HttpError::Status {
                    url: self.label.clone(),
                    status: status.as_u16(),
                });
            }
            let max = self.config.max_body_bytes;
            if response.content_length().is_some_and(|n| n > max as u64) {
                return Err(HttpError::BodyTooLarge {
                    url: self.label.clone(),
                    max,
                });
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| self.transport_error(&e))?
            {
                if body.len() + chunk.len() > max {
                    return Err(HttpError::BodyTooLarge {
                        url: self.label.clone(),
                        max,
                    });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(body)
        })
        .await
        .map_err(|_| timed_out())?
        .map_err(|e| {
            if e.is_timeout() {
                timed_out()
            } else {
                RequestError::Http(e)
            }
        })?;
        decode_envelope(&bytes).map_err(|e| {
            ConnectionError::Malformed {
                provider: self.label.clone(),
                detail: format!("{e}: {}", bounded_bytes(&bytes, 80)),
            }
            .into()
        })
    }

    fn encode(out: &Out<'_>) -> Vec<u8> {
        serde_json::to_vec(out).unwrap_or_else(|_| b"{}".to_vec())
    }

    fn known(&self) -> Option<Arc<ProviderDescriptor>> {
        self.descriptor
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn reply(
        &self,
        envelope: Envelope,
        expected: &'static str,
        id: Option<&str>,
    ) -> Result<Answer, RequestError> {
        let provider = self
            .known()
            .map_or_else(|| self.label.clone(), |d| d.id.clone());
        let correlated = self.known().is_some_and(|d| d.capabilities.correlation);
        let check_id = |got: Option<&str>| -> Result<(), RequestError> {
            if correlated && expected == "query" && got != id {
                return Err(ConnectionError::Correlation {
                    provider: provider.clone(),
                    detail: match got {
                        None => "a reply carried no id".to_owned(),
                        Some(g) => format!(
                            "a reply carried id {:?}, not {:?}",
                            bounded(g, 64),
                            id.unwrap_or_default()
                        ),
                    },
                }
                .into());
            }
            Ok(())
        };
        match envelope {
            Envelope::Frames { id: got, result } if expected == "query" => {
                check_id(got.as_deref())?;
                Ok(Answer::Frames(result))
            }
            Envelope::Verified { response } if expected == "verify" => {
                Ok(Answer::Verified(response))
            }
            Envelope::Error {
                id: got,
                code,
                message,
            } => {
                if expected == "query" && got.is_some() {
                    check_id(got.as_deref())?;
                }
                Ok(Answer::Error {
                    code,
                    message: bounded(&message, 1024),
                })
            }
            other => Err(ConnectionError::WrongReply {
                provider,
                expected,
                got: bounded(other.type_name(), 40),
            }
            .into()),
        }
    }
}

impl ProviderClient for HttpProviderClient {
    fn label(&self) -> String {
        self.known()
            .map_or_else(|| self.label.clone(), |d| d.id.clone())
    }

    fn ready(
        &self,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Arc<ProviderDescriptor>, RequestError>> {
        Box::pin(async move {
            if let Some(d) = self.known() {
                return Ok(d);
            }
            let body = Self::encode(&Out {
                kind: "handshake",
                id: None,
                query: None,
                request: None,
                protocol_version: Some(PROTOCOL_VERSION),
            });
            let descriptor = match self.exchange(body, deadline).await? {
                Envelope::HandshakeAck {
                    protocol_version,
                    provider,
                    capabilities,
                } => check_ack(
                    protocol_version,
                    provider,
                    capabilities,
                    TransportKind::Http {
                        url: self.label.clone(),
                        loopback: self.loopback,
                    },
                    &self.label,
                )?,
                Envelope::Error { code, message, .. } => {
                    return Err(error_instead_of_ack(&self.label, code, &message).into())
                }
                other => {
                    return Err(HandshakeError::NotProtocol {
                        provider: self.label.clone(),
                        detail: format!("a {} envelope", bounded(other.type_name(), 40)),
                        line: String::new(),
                    }
                    .into())
                }
            };
            let descriptor = Arc::new(descriptor);
            *self.descriptor.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(Arc::clone(&descriptor));
            Ok(descriptor)
        })
    }

    fn query<'a>(
        &'a self,
        query: &'a ContextQuery,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        Box::pin(async move {
            let Some(d) = self.known() else {
                return Err(RequestError::Down {
                    provider: self.label.clone(),
                    last: "not connected; call ready() first".to_owned(),
                });
            };
            // H4: an id only to a provider that declared correlation.
            let id = d
                .capabilities
                .correlation
                .then(|| format!("q{}", self.next.fetch_add(1, Ordering::Relaxed)));
            let body = Self::encode(&Out {
                kind: "query",
                id: id.as_deref(),
                query: Some(query),
                request: None,
                protocol_version: None,
            });
            let envelope = self.exchange(body, deadline).await?;
            self.reply(envelope, "query", id.as_deref())
        })
    }

    fn verify<'a>(
        &'a self,
        request: &'a VerifyRequest,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        Box::pin(async move {
            let body = Self::encode(&Out {
                kind: "verify",
                id: None,
                query: None,
                request: Some(request),
                protocol_version: None,
            });
            let envelope = self.exchange(body, deadline).await?;
            self.reply(envelope, "verify", None)
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        // Over HTTP "no further requests expected" is the whole of R2.
        Box::pin(async {})
    }
}
