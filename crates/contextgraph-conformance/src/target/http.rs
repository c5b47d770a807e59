//! A provider reached over HTTP: one envelope per POST body, one envelope
//! per response body (§1).
//!
//! Each [`send`](Channel::send) runs its exchange on its own thread and
//! queues the response as an [`Incoming`], so several requests can be in
//! flight at once (H4) and the suite waits on HTTP exactly as on stdio.
//! Redirects are never followed (a provider must not be able to bounce the
//! suite to another host), bodies are capped, and every exchange has the
//! request timeout.

use std::io::Read;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use contextgraph_codec::decode_envelope;

use super::{Channel, ExitOutcome, Incoming, TargetError};
use crate::text::show_bytes;
use crate::SuiteOptions;

/// A connection to an HTTP provider.
#[derive(Debug)]
pub struct HttpChannel {
    url: String,
    client: reqwest::blocking::Client,
    max_body: usize,
    tx: Sender<Incoming>,
    items: Receiver<Incoming>,
}

impl HttpChannel {
    /// A client for `url`.
    pub fn new(url: &str, options: &SuiteOptions) -> Result<Self, TargetError> {
        let bad = |reason: String| TargetError::Http {
            url: url.to_owned(),
            reason,
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| bad(format!("not a URL ({e})")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("only http:// and https:// URLs can be inspected".into()));
        }
        let client = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(options.request_timeout)
            .build()
            .map_err(|e| bad(format!("the HTTP client could not be built ({e})")))?;
        let (tx, items) = mpsc::channel();
        Ok(HttpChannel {
            url: url.to_owned(),
            client,
            max_body: options.max_line_bytes,
            tx,
            items,
        })
    }
}

fn exchange(
    client: &reqwest::blocking::Client,
    url: &str,
    body: Vec<u8>,
    max: usize,
) -> Option<Incoming> {
    let response = match client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
        .send()
    {
        Ok(r) => r,
        Err(e) => return Some(Incoming::Failed(format!("POST {url} failed: {e}"))),
    };
    let status = response.status();
    if status.is_redirection() {
        return Some(Incoming::Failed(format!(
            "POST {url} answered {status} (a redirect); the suite never follows redirects, inspect the final URL"
        )));
    }
    let mut bytes = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    if let Err(e) = response.take(limit).read_to_end(&mut bytes) {
        return Some(Incoming::Failed(format!(
            "reading the response of {url} failed: {e}"
        )));
    }
    if bytes.len() > max {
        return Some(Incoming::Oversized {
            bytes: bytes.len() as u64,
        });
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
            start: show_bytes(&bytes, 80),
            reason: format!("{e} (HTTP {status})"),
        },
    })
}

impl Channel for HttpChannel {
    fn send(&mut self, line: &[u8]) -> Result<(), String> {
        let client = self.client.clone();
        let url = self.url.clone();
        let tx = self.tx.clone();
        let body = line.to_vec();
        let max = self.max_body;
        thread::Builder::new()
            .name("cgp-inspect-http".into())
            .spawn(move || {
                if let Some(item) = exchange(&client, &url, body, max) {
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
