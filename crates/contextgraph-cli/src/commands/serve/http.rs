//! `--http <ADDR>` and its companions, shared by every `cgp serve` provider.
//!
//! Without `--http` a provider is served over stdio as before. With it the
//! provider is served over HTTP (one envelope per POST to `/cgp`) until
//! SIGINT/SIGTERM, and stderr gets, before anything else the server logs,
//! exactly one line
//!
//! ```text
//! cgp serve: listening on <URL>
//! ```
//!
//! where `<URL>` (no spaces, up to the end of the line) is what to give a
//! host or `cgp inspect http`; with port 0 it carries the port chosen.
//! Then one `key=value` log line per request follows (method, status,
//! latency, provider; never content or credentials, C8).
//!
//! The token is read from an environment variable or a file, never from the
//! command line, where other users of the machine could read it in the
//! process list.

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use clap::Args;
use contextgraph_provider_http_server::{
    serve_until_signal, AuthToken, HttpServeOptions, StderrLog, TlsFiles, DEFAULT_MAX_BODY_BYTES,
};
use contextgraph_provider_sdk::Provider;

use crate::commands::files::read_token_file;
use crate::commands::{CommandError, UsageError};

/// The prefix of the line announcing the bound address (see the module docs).
pub const LISTENING_PREFIX: &str = "cgp serve: listening on ";

/// HTTP serving options of `cgp serve <PROVIDER>`.
#[derive(Debug, Clone, Args)]
pub struct HttpFlags {
    /// Serve over HTTP on this address instead of stdio (e.g. 127.0.0.1:8700,
    /// localhost:8700; port 0 picks a free one). Envelopes are POSTed to /cgp.
    /// A non-loopback address needs TLS and a token.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,

    /// Require this bearer token, read from the environment variable VAR.
    #[arg(
        long,
        value_name = "VAR",
        requires = "http",
        conflicts_with = "token_file"
    )]
    pub token_env: Option<String>,

    /// Require this bearer token, read from the file PATH (surrounding
    /// whitespace trimmed).
    #[arg(long, value_name = "PATH", requires = "http")]
    pub token_file: Option<PathBuf>,

    /// Serve HTTPS with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "PEM", requires_all = ["http", "tls_key"])]
    pub tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires_all = ["http", "tls_cert"])]
    pub tls_key: Option<PathBuf>,

    /// Largest request body accepted over HTTP; larger ones get 413.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES,
          value_parser = crate::validate::max_body_bytes)]
    pub max_body_bytes: usize,

    /// Allow a non-loopback address without TLS and a token (only behind a
    /// proxy that terminates TLS and authenticates).
    #[arg(long, requires = "http")]
    pub insecure_public: bool,
}

/// An HTTP usage problem: names the flag and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpFlagError {
    /// `--http` is not an address.
    #[error(
        "--http {given:?} is not an address; use IP:PORT or localhost:PORT, e.g. 127.0.0.1:8700"
    )]
    Address {
        /// What was given.
        given: String,
    },
    /// The token variable is unset or not Unicode.
    #[error("--token-env {var}: the environment variable is not set (or not valid UTF-8); export it with the token before starting")]
    TokenEnv {
        /// The variable name.
        var: String,
    },
    /// The token file cannot be read.
    #[error("--token-file {}: {detail}", path.display())]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// The token is too short to protect anything.
    #[error("{source_name}: {reason}")]
    WeakToken {
        /// Where it came from (`--token-env VAR` or `--token-file PATH`).
        source_name: String,
        /// What is wrong and the fix.
        reason: String,
    },
    /// The token is unusable.
    #[error("{source_name}: {reason}")]
    Token {
        /// Where it came from (`--token-env VAR` or `--token-file PATH`).
        source_name: String,
        /// Why it cannot be used.
        reason: contextgraph_provider_http_server::TokenError,
    },
}

/// `localhost:PORT` (pinned to 127.0.0.1, like the host does) or `IP:PORT`.
pub fn parse_addr(text: &str) -> Result<SocketAddr, HttpFlagError> {
    let bad = || HttpFlagError::Address {
        given: text.to_owned(),
    };
    if let Some(port) = text
        .strip_prefix("localhost:")
        .or_else(|| text.strip_prefix("LOCALHOST:"))
    {
        let port = port.parse::<u16>().map_err(|_| bad())?;
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse::<SocketAddr>().map_err(|_| bad())
}

impl HttpFlags {
    /// The server options these flags describe.
    pub fn options(&self) -> Result<HttpServeOptions, HttpFlagError> {
        let mut options = HttpServeOptions::default()
            .with_max_body_bytes(self.max_body_bytes)
            .with_insecure_public(self.insecure_public);
        let token = match (&self.token_env, &self.token_file) {
            (Some(var), _) => {
                let text =
                    std::env::var(var).map_err(|_| HttpFlagError::TokenEnv { var: var.clone() })?;
                Some((format!("--token-env {var}"), text))
            }
            (None, Some(path)) => Some((
                format!("--token-file {}", path.display()),
                read_token_file(path).map_err(|detail| HttpFlagError::TokenFile {
                    path: path.clone(),
                    detail,
                })?,
            )),
            (None, None) => None,
        };
        if let Some((source_name, text)) = token {
            crate::validate::token_strength(&text).map_err(|reason| HttpFlagError::WeakToken {
                source_name: source_name.clone(),
                reason,
            })?;
            let token = AuthToken::new(&text).map_err(|reason| HttpFlagError::Token {
                source_name,
                reason,
            })?;
            options = options.with_token(token);
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            options = options.with_tls(TlsFiles {
                cert_chain: cert.clone(),
                private_key: key.clone(),
            });
        }
        Ok(options)
    }
}

/// Serve `provider` over HTTP at `addr` as `flags` say, until a signal.
pub fn serve_http<P: Provider>(
    provider: P,
    addr: &str,
    flags: &HttpFlags,
) -> Result<(), CommandError> {
    serve_http_with(provider, addr, flags, |o| o)
}

/// [`serve_http`] with options the flags do not set (a health probe, the
/// replica handshake of a read-only workspace) added by `extra`.
pub fn serve_http_with<P: Provider>(
    provider: P,
    addr: &str,
    flags: &HttpFlags,
    extra: impl FnOnce(HttpServeOptions) -> HttpServeOptions,
) -> Result<(), CommandError> {
    let addr = parse_addr(addr).map_err(|e| UsageError(e.to_string()))?;
    // A bad flag value is a usage error (exit 2); an unreadable token
    // file or unset variable is a failure of the environment (exit 1).
    let options = flags.options().map_err(|e| -> CommandError {
        match e {
            HttpFlagError::Address { .. }
            | HttpFlagError::Token { .. }
            | HttpFlagError::WeakToken { .. } => Box::new(UsageError(e.to_string())),
            other => other.into(),
        }
    })?;
    let options = extra(options);
    StderrLog::default().install();
    serve_until_signal(provider, options, addr, |url| {
        let _ = writeln!(std::io::stderr(), "{LISTENING_PREFIX}{url}");
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_localhost_is_pinned_to_loopback() {
        assert_eq!(parse_addr("127.0.0.1:0").unwrap().port(), 0);
        assert_eq!(
            parse_addr("localhost:8700").unwrap(),
            "127.0.0.1:8700".parse().unwrap()
        );
        assert!(parse_addr("[::1]:8700").unwrap().ip().is_loopback());
        for bad in ["8700", "example.com:80", "localhost", "127.0.0.1:99999"] {
            assert!(parse_addr(bad).is_err(), "{bad}");
        }
    }
}
