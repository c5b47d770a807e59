//! What the suite talks to, and how bytes reach it. Transport only: the
//! rules live in [`checks`](crate::checks).
//!
//! Every transport delivers what the provider sent as [`Incoming`] items on
//! one channel, whatever the transport: a stdio reader thread pushes one
//! item per line, an HTTP exchange one item per response body. The
//! [`Probe`](crate::probe::Probe) above it therefore waits with a deadline
//! in exactly one way.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use contextgraph_codec::Envelope;

#[cfg(feature = "http")]
pub mod http;
pub mod stdio;

/// What is inspected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// A program spawned with piped stdin/stdout/stderr.
    Stdio {
        /// The program.
        program: PathBuf,
        /// Its arguments.
        args: Vec<OsString>,
    },
    /// A provider reached by POSTing one envelope per request.
    #[cfg(feature = "http")]
    #[non_exhaustive]
    Http {
        /// The endpoint, `http://` or `https://`.
        url: String,
        /// Credentials and trust: a bearer token (redacted in `Debug`, C8),
        /// extra CA certificates.
        options: http::HttpTargetOptions,
    },
}

impl Target {
    /// A stdio target.
    pub fn stdio<P, I, A>(program: P, args: I) -> Self
    where
        P: Into<PathBuf>,
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        Target::Stdio {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// An HTTP target with no token and only the built-in web roots.
    #[cfg(feature = "http")]
    pub fn http(url: impl Into<String>) -> Self {
        Self::http_with(url, http::HttpTargetOptions::default())
    }

    /// An HTTP target with a bearer token and/or extra trusted CA
    /// certificates, e.g. one served by `cgp serve … --http --tls-cert …
    /// --token-env …`.
    #[cfg(feature = "http")]
    pub fn http_with(url: impl Into<String>, options: http::HttpTargetOptions) -> Self {
        Target::Http {
            url: url.into(),
            options,
        }
    }

    /// How the report names the target.
    pub fn describe(&self) -> String {
        match self {
            Target::Stdio { program, args } => {
                let mut text = format!("stdio: {}", program.display());
                for a in args {
                    text.push(' ');
                    text.push_str(&a.to_string_lossy());
                }
                text
            }
            // The report carries this text: credentials never do (C8).
            #[cfg(feature = "http")]
            Target::Http { url, options } => {
                format!("http: {}{}", http::shown_url(url), options.describe())
            }
        }
    }

    /// Whether the target is a process the suite owns (R2 applies: it must
    /// exit on `shutdown`).
    pub fn is_process(&self) -> bool {
        matches!(self, Target::Stdio { .. })
    }

    /// Open a fresh connection (a new process for stdio).
    pub fn connect(&self, options: &crate::SuiteOptions) -> Result<Box<dyn Channel>, TargetError> {
        match self {
            Target::Stdio { program, args } => Ok(Box::new(stdio::StdioChannel::spawn(
                program, args, options,
            )?)),
            #[cfg(feature = "http")]
            Target::Http {
                url,
                options: http_options,
            } => Ok(Box::new(http::HttpChannel::new(
                url,
                http_options,
                options,
            )?)),
        }
    }
}

/// Why a connection could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The program could not be started.
    #[error("cannot start {program:?}: {source}; check the path and that it is executable")]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The HTTP client could not be built or the URL is unusable. Never
    /// carries the bearer token (C8).
    #[error("cannot reach {url:?}: {reason}")]
    Http {
        /// The URL, credentials removed.
        url: String,
        /// Why.
        reason: String,
    },
}

/// One thing the provider sent.
#[derive(Debug)]
pub enum Incoming {
    /// A line (body) that decoded as an envelope.
    Envelope(Envelope),
    /// A line (body) that is not an envelope: what it started with, and why.
    BadLine {
        /// The first bytes, lossily decoded, clipped.
        start: String,
        /// Why it is not an envelope.
        reason: String,
    },
    /// A line (body) longer than the cap, dropped unread.
    Oversized {
        /// Bytes dropped.
        bytes: u64,
    },
    /// The transport failed for one exchange (HTTP: connection refused, a
    /// status without an envelope body, a timeout).
    Failed(String),
    /// The provider closed its output (stdio: stdout reached end of file).
    Closed,
}

/// How a process ended after `shutdown`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitOutcome {
    /// It exited by itself with this code (`None`: killed by a signal).
    Exited(Option<i32>),
    /// It was still running after the grace period and was killed.
    Killed,
    /// Not a process (HTTP).
    NotAProcess,
}

/// One connection to a provider.
pub trait Channel: Send {
    /// Send one envelope line (no trailing newline; the channel frames it).
    fn send(&mut self, line: &[u8]) -> Result<(), String>;

    /// The next item, waiting until `deadline`; `None` on timeout.
    fn recv(&mut self, deadline: Instant) -> Option<Incoming>;

    /// Close the provider's input and wait up to `grace` for it to exit,
    /// killing it afterwards. Called after `shutdown` has been sent.
    fn wait_exit(&mut self, grace: Duration) -> ExitOutcome;

    /// The exit code, if the process has already exited (`Some(None)`:
    /// killed by a signal).
    fn exited(&mut self) -> Option<Option<i32>>;

    /// The tail of the provider's stderr, for evidence (empty for HTTP).
    fn stderr_tail(&self) -> String;
}
