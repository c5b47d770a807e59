//! One HTTP request → one response. The HTTP checks (host, auth, path,
//! method, content type, size) come first and answer with a status and no
//! envelope content; a request that passes them is handed to the shared
//! [`Session`], whose reply is the response body (status 200), or 204 when
//! the envelope calls for no reply (a notification, `shutdown`); a server
//! that can no longer run the provider because it is shutting down answers
//! 503 with a `shutting_down` envelope, so a load balancer retries it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use contextgraph_codec::Envelope;
use contextgraph_provider_sdk::{Provider, Session};
use contextgraph_types::ErrorCode;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::Semaphore;

use crate::auth::AuthToken;
use crate::exposure::is_loopback_host_header;

/// What every request handler shares.
pub(crate) struct State<P> {
    pub session: Arc<Session<P>>,
    pub provider: String,
    pub path: String,
    pub token: Option<AuthToken>,
    pub loopback_only: bool,
    pub max_body_bytes: usize,
    pub body_read_timeout: Duration,
    /// Provider calls running at once (1 for a lock-step provider).
    pub work: Arc<Semaphore>,
    /// `GET /healthz`, when set.
    pub health: Option<crate::options::HealthProbe>,
}

/// What the log line says about a response.
struct Outcome {
    response: Response<Full<Bytes>>,
    reply: &'static str,
    code: Option<String>,
}

fn empty(status: StatusCode, reply: &'static str) -> Outcome {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    Outcome {
        response,
        reply,
        code: None,
    }
}

fn envelope(status: StatusCode, env: &Envelope) -> Outcome {
    let (reply, code) = match env {
        Envelope::Error { code, .. } => (
            "error",
            Some(code.as_ref().map_or_else(
                || "none".to_owned(),
                |c| contextgraph_types::display_text::bounded(&c.to_string(), 64),
            )),
        ),
        Envelope::HandshakeAck { .. } => ("handshake_ack", None),
        Envelope::Frames { .. } => ("frames", None),
        Envelope::Verified { .. } => ("verified", None),
        _ => ("other", None),
    };
    let (status, body) = match serde_json::to_vec(env) {
        Ok(body) => (status, body),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, Vec::new()),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Outcome {
        response,
        reply,
        code,
    }
}

/// Whether the media type is `application/json` (parameters allowed).
/// Requiring it means a browser cannot send the request cross-origin
/// without a CORS preflight, which this server never approves.
fn is_json(value: Option<&HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// Answer one request and log it (never its body or headers).
pub(crate) async fn handle<P: Provider>(
    state: Arc<State<P>>,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let started = Instant::now();
    let method = req.method().clone();
    let outcome = answer(&state, req).await;
    let status = outcome.response.status().as_u16();
    let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    match &outcome.code {
        Some(code) => tracing::info!(
            provider = %state.provider, method = %method, status, reply = outcome.reply,
            code = %code, latency_us, "request"
        ),
        None => tracing::info!(
            provider = %state.provider, method = %method, status, reply = outcome.reply,
            latency_us, "request"
        ),
    }
    outcome.response
}

async fn answer<P: Provider>(state: &State<P>, req: Request<Incoming>) -> Outcome {
    if state.loopback_only {
        let host = req.headers().get(header::HOST).map(HeaderValue::to_str);
        if let Some(host) = host {
            if !host.is_ok_and(is_loopback_host_header) {
                return empty(StatusCode::MISDIRECTED_REQUEST, "foreign-host");
            }
        }
    }
    if let Some(probe) = state
        .health
        .as_ref()
        .filter(|_| req.uri().path() == "/healthz")
    {
        if req.method() != Method::GET {
            let mut out = empty(StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed");
            out.response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET"));
            return out;
        }
        let (ready, body) = probe();
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = if ready {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return Outcome {
            response,
            reply: "health",
            code: None,
        };
    }
    if let Some(token) = &state.token {
        let presented = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes);
        if !token.accepts(presented) {
            let mut out = empty(StatusCode::UNAUTHORIZED, "unauthorized");
            out.response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return out;
        }
    }
    if req.uri().path() != state.path {
        return empty(StatusCode::NOT_FOUND, "not-found");
    }
    if req.method() != Method::POST {
        let mut out = empty(StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed");
        out.response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return out;
    }
    if !is_json(req.headers().get(header::CONTENT_TYPE)) {
        return empty(StatusCode::UNSUPPORTED_MEDIA_TYPE, "not-json");
    }
    let max = state.max_body_bytes;
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared.filter(|n| *n > max as u64) {
        return too_large(state, &format!("of {n} bytes"), max);
    }
    let body = match tokio::time::timeout(
        state.body_read_timeout,
        Limited::new(req.into_body(), max).collect(),
    )
    .await
    {
        Err(_) => return empty(StatusCode::REQUEST_TIMEOUT, "body-timeout"),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return too_large(state, &format!("of more than {max} bytes"), max)
        }
        Ok(Err(_)) => return empty(StatusCode::BAD_REQUEST, "body-read-failed"),
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    dispatch(state, body).await
}

fn too_large<P: Provider>(state: &State<P>, size: &str, max: usize) -> Outcome {
    envelope(
        StatusCode::PAYLOAD_TOO_LARGE,
        &Envelope::error(
            None,
            ErrorCode::BadRequest,
            format!(
                "{}: R1: a request body {size} exceeds this server's {max}-byte limit and was not read; send smaller envelopes",
                state.provider
            ),
        ),
    )
}

async fn dispatch<P: Provider>(state: &State<P>, body: Bytes) -> Outcome {
    let Ok(permit) = Arc::clone(&state.work).acquire_owned().await else {
        return unavailable(&state.provider);
    };
    let session = Arc::clone(&state.session);
    let reply = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        session.handle_line(&body)
    })
    .await;
    match reply {
        Ok(Some(env)) => envelope(StatusCode::OK, &env),
        Ok(None) => empty(StatusCode::NO_CONTENT, "none"),
        // The session catches provider panics; this is the runtime refusing
        // the task (it is shutting down).
        Err(_) => unavailable(&state.provider),
    }
}

/// The answer of a server that is shutting down: status 503 (with
/// `Retry-After: 0`) and a `shutting_down` envelope. The status is what a
/// load balancer reads: nginx retries a request on another replica for a
/// 503 (`proxy_next_upstream … http_503`) but passes a 200 through whatever
/// its body says, so during a rolling restart a 200 here would reach the
/// client as a failure instead of being answered by another replica.
fn unavailable(provider: &str) -> Outcome {
    let mut out = envelope(
        StatusCode::SERVICE_UNAVAILABLE,
        &Envelope::error(
            None,
            ErrorCode::ShuttingDown,
            format!("{provider}: the server is shutting down; retry against a restarted server"),
        ),
    );
    out.response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("0"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rolling restart behind nginx relies on this status: `proxy_next_upstream
    /// http_503` retries it on another replica, a 200 would not be retried.
    #[test]
    fn a_server_shutting_down_answers_503_with_a_shutting_down_envelope() {
        let out = unavailable("shard-7");
        assert_eq!(out.response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            out.response.headers().get(header::RETRY_AFTER),
            Some(&HeaderValue::from_static("0"))
        );
        assert_eq!(out.code.as_deref(), Some("shutting_down"));
    }
}
