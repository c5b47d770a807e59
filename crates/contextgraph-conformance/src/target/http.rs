//! A provider reached over HTTP: one envelope per POST body, one envelope
//! per response body (§1).
//!
//! Each [`send`](Channel::send) runs its exchange on its own thread and
//! queues the response as an [`Incoming`], so several requests can be in
//! flight at once (H4) and the suite waits on HTTP exactly as on stdio.
//! Redirects are never followed (a provider must not be able to bounce the
//! suite, and its token, to another host), bodies are capped, and every
//! exchange has the request timeout.
//!
//! An authenticated, TLS-protected provider (`cgp serve … --http ADDR
//! --tls-cert … --token-env …`) is reached with [`HttpTargetOptions`]: a
//! [`BearerToken`] sent as `Authorization: Bearer …` on every exchange, and
//! extra trusted CA certificates. The token follows the host transport's
//! C8 rules:
//! - its `Debug`/`Display` are redacted, and [`Target::describe`]
//!   (the report's `target`) only says that one is sent;
//! - it is sent only in the header, which is marked sensitive, and never
//!   over plaintext to a non-loopback host (C7); URLs carrying credentials
//!   are refused;
//! - the body of a 401/403 is not read; any other body is scrubbed of the
//!   token before it is decoded, so a provider echoing it cannot put it into
//!   report evidence;
//! - errors name the URL (credentials removed) and the transport's reason,
//!   never a header.
//!
//! [`Target::describe`]: super::Target::describe

use std::fmt;
use std::io::Read;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use contextgraph_codec::decode_envelope;
use reqwest::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use reqwest::StatusCode;

use super::{Channel, ExitOutcome, Incoming, TargetError};
use crate::SuiteOptions;
use contextgraph_types::display_text::{bounded, bounded_bytes};
use contextgraph_types::loopback::is_loopback_host;

/// What replaces the token wherever a provider echoed it (C8).
const REDACTED: &[u8] = b"[redacted]";

/// The workspace's one bearer credential (C8), re-exported under the
/// suite's names.
pub use contextgraph_types::credential::{BearerToken, BearerTokenError};

/// The `Authorization` header value for `token`, marked sensitive so that
/// the HTTP stack never shows it.
fn header(token: &BearerToken) -> Result<HeaderValue, BearerTokenError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
        .map_err(|_| BearerTokenError::NotHeaderSafe)?;
    value.set_sensitive(true);
    Ok(value)
}

/// Why a CA certificate cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CaCertError {
    /// The data holds no `-----BEGIN CERTIFICATE-----` block.
    #[error("no PEM certificate (-----BEGIN CERTIFICATE-----) in it")]
    NoCertificate,
    /// A certificate block could not be parsed.
    #[error("not a valid PEM certificate ({0})")]
    Invalid(String),
}

/// Credentials and trust for an HTTP target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpTargetOptions {
    /// Sent as `Authorization: Bearer …` on every exchange when set.
    pub bearer: Option<BearerToken>,
    /// Extra trusted CA certificates, each entry the contents of a PEM file
    /// (one or more certificates), e.g. the private CA of a test server.
    pub ca_certs_pem: Vec<Vec<u8>>,
    /// Trust only `ca_certs_pem`, not the built-in web roots.
    pub only_extra_roots: bool,
}

impl HttpTargetOptions {
    /// Send this bearer token on every exchange.
    #[must_use]
    pub fn with_bearer(mut self, token: BearerToken) -> Self {
        self.bearer = Some(token);
        self
    }

    /// Also trust the CA certificate(s) in `pem` (the contents of a PEM
    /// file). Checked here, so a caller can name the file it came from.
    pub fn with_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Result<Self, CaCertError> {
        let pem = pem.into();
        parse_ca_pem(&pem)?;
        self.ca_certs_pem.push(pem);
        Ok(self)
    }

    /// Trust only the extra CA certificates, not the built-in web roots.
    #[must_use]
    pub fn only_extra_roots(mut self, only: bool) -> Self {
        self.only_extra_roots = only;
        self
    }

    /// What [`Target::describe`](super::Target::describe) adds after the URL:
    /// that a token is sent (never the token, C8) and which roots are trusted.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.bearer.is_some() {
            parts.push("bearer token [redacted]".to_owned());
        }
        match self.ca_certs_pem.len() {
            0 => {}
            1 => parts.push("1 extra CA file".to_owned()),
            n => parts.push(format!("{n} extra CA files")),
        }
        if self.only_extra_roots {
            parts.push("only extra roots".to_owned());
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    }
}

/// The certificates in one PEM file.
fn parse_ca_pem(pem: &[u8]) -> Result<Vec<reqwest::Certificate>, CaCertError> {
    let certs = reqwest::Certificate::from_pem_bundle(pem)
        .map_err(|e| CaCertError::Invalid(error_chain(&e)))?;
    if certs.is_empty() {
        return Err(CaCertError::NoCertificate);
    }
    Ok(certs)
}

/// `url` as a report may show it: user name and password removed (C8).
/// Text that is not a URL is shown as given, clipped (it is refused on
/// connect).
pub(crate) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            bounded(parsed.as_str(), 200)
        }
        Err(_) => bounded(url, 200),
    }
}

/// An error and its sources, joined: reqwest's own message says only "error
/// sending request", the reason (refused, certificate unknown) is deeper.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// `bytes` with every occurrence of `secret` replaced by `[redacted]`.
fn redact(bytes: Vec<u8>, secret: &[u8]) -> Vec<u8> {
    let find = |hay: &[u8]| hay.windows(secret.len()).position(|w| w == secret);
    if secret.is_empty() || find(&bytes).is_none() {
        return bytes;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = &bytes[..];
    while let Some(at) = find(rest) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(REDACTED);
        rest = &rest[at + secret.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// A connection to an HTTP provider.
pub struct HttpChannel {
    exchange: Arc<Exchange>,
    tx: Sender<Incoming>,
    items: Receiver<Incoming>,
}

impl fmt::Debug for HttpChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpChannel")
            .field("url", &self.exchange.shown)
            .field("bearer", &self.exchange.secret)
            .field("max_body", &self.exchange.max)
            .finish_non_exhaustive()
    }
}

impl HttpChannel {
    /// A client for `url` with `http`'s token and roots. Sends nothing.
    pub fn new(
        url: &str,
        http: &HttpTargetOptions,
        options: &SuiteOptions,
    ) -> Result<Self, TargetError> {
        let shown = shown_url(url);
        let bad = |reason: String| TargetError::Http {
            url: shown.clone(),
            reason,
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| bad(format!("not a URL ({e})")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("only http:// and https:// URLs can be inspected".into()));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(bad(
                "credentials in the URL would end up in the report (C8); pass a bearer token instead (cgp inspect http --token-env/--token-file)".into(),
            ));
        }
        let loopback = is_loopback_host(parsed.host_str().unwrap_or_default());
        if http.bearer.is_some() && parsed.scheme() == "http" && !loopback {
            // C7/C8: the token would cross the network in the clear.
            return Err(bad(
                "C7: a bearer token is never sent over plaintext HTTP to a non-loopback host (nothing was sent); use https://".into(),
            ));
        }
        if http.only_extra_roots && http.ca_certs_pem.is_empty() {
            return Err(bad(
                "only extra roots are trusted but no CA certificate was given, so no server could be trusted".into(),
            ));
        }
        let mut builder = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(options.request_timeout)
            .use_rustls_tls()
            .tls_built_in_root_certs(!http.only_extra_roots);
        for (i, pem) in http.ca_certs_pem.iter().enumerate() {
            let certs = parse_ca_pem(pem)
                .map_err(|e| bad(format!("extra CA certificate file #{}: {e}", i + 1)))?;
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        let client = builder.build().map_err(|e| {
            bad(format!(
                "the HTTP client could not be built ({})",
                error_chain(&e)
            ))
        })?;
        let auth = match &http.bearer {
            Some(token) => Some(header(token).map_err(|e| bad(e.to_string()))?),
            None => None,
        };
        let (tx, items) = mpsc::channel();
        Ok(HttpChannel {
            exchange: Arc::new(Exchange {
                client,
                url: parsed,
                shown,
                auth,
                secret: http.bearer.clone(),
                max: options.max_line_bytes,
            }),
            tx,
            items,
        })
    }
}

/// What every POST of one connection shares.
struct Exchange {
    client: reqwest::blocking::Client,
    url: reqwest::Url,
    /// The URL as errors name it (credentials removed).
    shown: String,
    /// `Authorization: Bearer …`, marked sensitive.
    auth: Option<HeaderValue>,
    /// The token, only to scrub it from response bodies.
    secret: Option<BearerToken>,
    /// Largest response body read.
    max: usize,
}

impl Exchange {
    fn run(&self, body: Vec<u8>) -> Option<Incoming> {
        let url = &self.shown;
        let mut request = self
            .client
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        let response = match request.send() {
            Ok(r) => r,
            Err(e) => return Some(Incoming::Failed(self.transport_failure(e))),
        };
        let status = response.status();
        if status.is_redirection() {
            return Some(Incoming::Failed(format!(
                "POST {url} answered {status} (a redirect); the suite never follows redirects, inspect the final URL"
            )));
        }
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            // The body is not read: it might echo the header back (C8).
            let why = if self.auth.is_some() {
                "the bearer token sent was refused"
            } else {
                "the provider requires a bearer token and none was sent"
            };
            return Some(Incoming::Failed(format!(
                "POST {url} answered {status}: {why} (the response body is not read, C8)"
            )));
        }
        let mut bytes = Vec::new();
        let limit = u64::try_from(self.max)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        if let Err(e) = response.take(limit).read_to_end(&mut bytes) {
            return Some(Incoming::Failed(format!(
                "reading the response of {url} failed: {}",
                error_chain(&e)
            )));
        }
        if bytes.len() > self.max {
            return Some(Incoming::Oversized {
                bytes: bytes.len() as u64,
            });
        }
        if let Some(token) = &self.secret {
            bytes = redact(bytes, token.expose().as_bytes());
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            // A notification (or shutdown) needs no answer: an empty body is fine.
            return if status.is_success() {
                None
            } else {
                Some(Incoming::Failed(format!(
                    "POST {url} answered {status} with no envelope"
                )))
            };
        }
        Some(match decode_envelope(&bytes) {
            Ok(env) => Incoming::Envelope(env),
            Err(e) => Incoming::BadLine {
                start: bounded_bytes(&bytes, 80),
                reason: format!("{e} (HTTP {status})"),
            },
        })
    }

    /// Why the request failed, with the transport's reason (refused,
    /// timeout, certificate), never a header (C8).
    fn transport_failure(&self, e: reqwest::Error) -> String {
        // `without_url`: the URL is named once, by us, credentials removed.
        let detail = error_chain(&e.without_url());
        let hint = if detail.contains("certificate") || detail.contains("UnknownIssuer") {
            "; a TLS certificate problem: if the provider's certificate comes from a private CA, trust that CA (cgp inspect http --ca-cert PEM)"
        } else {
            ""
        };
        format!("POST {} failed: {detail}{hint}", self.shown)
    }
}

impl Channel for HttpChannel {
    fn send(&mut self, line: &[u8]) -> Result<(), String> {
        let exchange = Arc::clone(&self.exchange);
        let tx = self.tx.clone();
        let body = line.to_vec();
        thread::Builder::new()
            .name("cgp-inspect-http".into())
            .spawn(move || {
                if let Some(item) = exchange.run(body) {
                    let _ = tx.send(item);
                }
            })
            .map(drop)
            .map_err(|e| format!("cannot start an HTTP exchange thread ({e})"))
    }

    fn recv(&mut self, deadline: Instant) -> Option<Incoming> {
        let wait = deadline.saturating_duration_since(Instant::now());
        // The channel's own sender lives in `self`, so it never disconnects.
        self.items.recv_timeout(wait).ok()
    }

    fn wait_exit(&mut self, _grace: Duration) -> ExitOutcome {
        ExitOutcome::NotAProcess
    }

    fn exited(&mut self) -> Option<Option<i32>> {
        None
    }

    fn stderr_tail(&self) -> String {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{SocketAddr, TcpListener, TcpStream};
    use std::sync::Mutex;

    use super::*;
    use crate::Target;

    const SECRET: &str = "conformance-secret-9d1e7a";

    fn token() -> BearerToken {
        BearerToken::new(SECRET).unwrap()
    }

    fn with_token() -> HttpTargetOptions {
        HttpTargetOptions::default().with_bearer(token())
    }

    fn connect(url: &str, http: HttpTargetOptions) -> Result<HttpChannel, TargetError> {
        HttpChannel::new(url, &http, &SuiteOptions::default())
    }

    #[test]
    fn bearer_tokens_are_trimmed_like_the_server_trims_them_and_must_fit_a_header() {
        assert_eq!(BearerToken::new(&format!("  {SECRET}\r\n")), Ok(token()));
        assert_eq!(BearerToken::new(" \n"), Err(BearerTokenError::Empty));
        assert_eq!(
            BearerToken::new("two words"),
            Err(BearerTokenError::NotHeaderSafe)
        );
        assert_eq!(
            BearerToken::new("caf\u{e9}"),
            Err(BearerTokenError::NotHeaderSafe)
        );
    }

    #[test]
    fn c8_the_token_is_redacted_in_debug_display_and_the_report_target() {
        let target = Target::http_with("https://127.0.0.1:8700/cgp", with_token());
        let shown = [
            format!("{:?}", token()),
            token().to_string(),
            format!("{:?}", with_token()),
            format!("{target:?}"),
            target.describe(),
        ];
        for text in &shown {
            assert!(!text.contains(SECRET), "C8: {text}");
            assert!(text.contains("redacted"), "says a token is set: {text}");
        }
        assert_eq!(
            target.describe(),
            "http: https://127.0.0.1:8700/cgp (bearer token [redacted])"
        );
        assert_eq!(
            Target::http("http://127.0.0.1:8700/cgp").describe(),
            "http: http://127.0.0.1:8700/cgp"
        );
        let channel = connect("https://127.0.0.1:8700/cgp", with_token()).unwrap();
        assert!(!format!("{channel:?}").contains(SECRET));
    }

    #[test]
    fn c8_credentials_in_the_url_are_refused_and_never_shown() {
        let url = "http://user:pw-in-url@127.0.0.1:8700/cgp";
        let target = Target::http(url);
        assert!(
            !target.describe().contains("pw-in-url"),
            "{}",
            target.describe()
        );
        let e = connect(url, HttpTargetOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("C8") && !e.contains("pw-in-url"), "{e}");
    }

    #[test]
    fn c7_a_token_is_never_sent_over_plaintext_to_a_remote_host() {
        let e = connect("http://cgp.example.org/cgp", with_token())
            .unwrap_err()
            .to_string();
        assert!(e.contains("C7") && e.contains("https://"), "{e}");
        assert!(!e.contains(SECRET), "{e}");
        // Plaintext on loopback (a local `cgp serve --http`) is fine, as for
        // the host (C7 concerns leaving the machine); so is any https URL.
        assert!(connect("http://127.0.0.1:8700/cgp", with_token()).is_ok());
        assert!(connect("http://localhost:8700/cgp", with_token()).is_ok());
        assert!(connect("https://cgp.example.org/cgp", with_token()).is_ok());
        // Without a token nothing secret would cross the network.
        assert!(connect("http://cgp.example.org/cgp", HttpTargetOptions::default()).is_ok());
    }

    #[test]
    fn ca_files_without_a_certificate_are_refused_and_only_extra_roots_needs_one() {
        assert_eq!(
            HttpTargetOptions::default().with_ca_pem("not a certificate"),
            Err(CaCertError::NoCertificate)
        );
        let e = connect(
            "https://127.0.0.1:8700/cgp",
            HttpTargetOptions::default().only_extra_roots(true),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no CA certificate"), "{e}");
    }

    #[test]
    fn redaction_replaces_every_occurrence_and_leaves_other_bytes() {
        assert_eq!(
            redact(b"a-tok-b-tok".to_vec(), b"tok"),
            b"a-[redacted]-b-[redacted]".to_vec()
        );
        assert_eq!(redact(b"nothing".to_vec(), b"tok"), b"nothing".to_vec());
    }

    /// A loopback HTTP server answering the scripted `(status, body)`
    /// responses in order, one per connection, recording each request's
    /// `Authorization` header.
    fn scripted(responses: Vec<(u16, String)>) -> (SocketAddr, Arc<Mutex<Vec<Option<String>>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        thread::spawn(move || {
            for (status, body) in responses {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                let auth = answer(stream, status, &body);
                record.lock().unwrap().push(auth);
            }
        });
        (addr, seen)
    }

    fn answer(mut stream: TcpStream, status: u16, body: &str) -> Option<String> {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        let header = |name: &str| {
            head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_owned())
            })
        };
        let length: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut request_body = vec![0u8; length];
        let _ = stream.read_exact(&mut request_body);
        let _ = write!(
            stream,
            "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        header("authorization")
    }

    fn one(channel: &mut dyn Channel) -> Incoming {
        channel.send(br#"{"type":"shutdown"}"#).unwrap();
        channel
            .recv(Instant::now() + Duration::from_secs(20))
            .expect("an answer within the hang guard")
    }

    #[test]
    fn c8_the_token_goes_on_every_exchange_and_never_comes_back_into_evidence() {
        let echo = format!("you sent Bearer {SECRET}");
        let (addr, seen) = scripted(vec![
            (
                200,
                format!(r#"{{"type":"error","code":"bad_request","message":"{echo}"}}"#),
            ),
            (500, format!("plain text: {echo}")),
            (401, echo.clone()),
        ]);
        let mut channel = connect(&format!("http://{addr}/cgp"), with_token()).unwrap();
        let items = [one(&mut channel), one(&mut channel), one(&mut channel)];
        assert!(matches!(items[0], Incoming::Envelope(_)), "{:?}", items[0]);
        assert!(
            matches!(items[1], Incoming::BadLine { .. }),
            "{:?}",
            items[1]
        );
        match &items[2] {
            Incoming::Failed(why) => {
                assert!(why.contains("401") && why.contains("refused"), "{why}")
            }
            other => panic!("a 401 is a failure: {other:?}"),
        }
        for item in &items {
            let text = format!("{item:?}");
            assert!(!text.contains(SECRET), "C8: {text}");
        }
        assert!(format!("{:?}", items[0]).contains("you sent Bearer [redacted]"));
        let expected = Some(format!("Bearer {SECRET}"));
        assert_eq!(
            *seen.lock().unwrap(),
            vec![expected.clone(), expected.clone(), expected]
        );
    }

    #[test]
    fn without_a_token_no_authorization_is_sent_and_a_401_says_one_is_needed() {
        let (addr, seen) = scripted(vec![(401, String::new())]);
        let mut channel =
            connect(&format!("http://{addr}/cgp"), HttpTargetOptions::default()).unwrap();
        match one(&mut channel) {
            Incoming::Failed(why) => {
                assert!(
                    why.contains("401") && why.contains("none was sent"),
                    "{why}"
                )
            }
            other => panic!("a 401 is a failure: {other:?}"),
        }
        assert_eq!(*seen.lock().unwrap(), vec![None]);
    }
}
