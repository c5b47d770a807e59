//! The credentials and trust of `cgp inspect http`: `--token-env VAR` or
//! `--token-file PATH` for a provider served with `cgp serve … --http
//! --token-env/--token-file`, and `--ca-cert PEM` for one served with a
//! certificate from a private CA (`--tls-cert`).
//!
//! The token is read from an environment variable or a file, never from the
//! command line, where other users of the machine could read it in the
//! process list. It is trimmed of surrounding whitespace exactly as `cgp
//! serve` trims the token it requires, so the same variable or file works
//! on both ends. Errors name the variable or file, never the token (C8).

use std::path::PathBuf;

use clap::Args;
use contextgraph_conformance::{BearerToken, BearerTokenError, CaCertError, HttpTargetOptions};

use crate::commands::files::{read_capped, read_token_file};

/// Largest CA certificate file read (a bundle of a few hundred roots fits).
const MAX_CA_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// `cgp inspect http` flags for an authenticated, TLS-protected provider.
#[derive(Debug, Args)]
pub struct HttpAuthArgs {
    /// Send the bearer token held in the environment variable VAR (as
    /// `Authorization: Bearer …` on every request; never printed).
    #[arg(long, value_name = "VAR", conflicts_with = "token_file")]
    pub token_env: Option<String>,

    /// Send the bearer token held in the file PATH (surrounding whitespace,
    /// such as the final newline, trimmed).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,

    /// Also trust the CA certificate(s) in this PEM file, e.g. the CA that
    /// issued the provider's --tls-cert (repeatable).
    #[arg(long, value_name = "PEM")]
    pub ca_cert: Vec<PathBuf>,

    /// Trust only the --ca-cert certificates, not the built-in web roots
    /// (a private deployment whose server must not pass with a public
    /// certificate).
    #[arg(long, requires = "ca_cert")]
    pub only_ca_cert: bool,
}

/// A token or certificate flag that cannot be used. Names the flag and its
/// variable or file, never the token (C8).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpAuthError {
    /// The token variable is unset or not Unicode.
    #[error("--token-env {var}: the environment variable is not set (or not valid UTF-8); export it with the provider's token")]
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
    /// The token read is unusable (empty, or not header-safe).
    #[error("{source_name}: {reason}; put the provider's token in it")]
    Token {
        /// Where it came from (`--token-env VAR` or `--token-file PATH`).
        source_name: String,
        /// Why it cannot be used.
        reason: BearerTokenError,
    },
    /// A CA certificate file cannot be read or holds no certificate.
    #[error("--ca-cert {}: {detail}", path.display())]
    CaCert {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
}

impl HttpAuthArgs {
    /// The HTTP target options these flags describe.
    pub fn options(&self) -> Result<HttpTargetOptions, HttpAuthError> {
        let mut options = HttpTargetOptions::default();
        let token = match (&self.token_env, &self.token_file) {
            (Some(var), _) => {
                let text =
                    std::env::var(var).map_err(|_| HttpAuthError::TokenEnv { var: var.clone() })?;
                Some((format!("--token-env {var}"), text))
            }
            (None, Some(path)) => {
                let fail = |detail: String| HttpAuthError::TokenFile {
                    path: path.clone(),
                    detail,
                };
                let text = read_token_file(path).map_err(fail)?;
                Some((format!("--token-file {}", path.display()), text))
            }
            (None, None) => None,
        };
        if let Some((source_name, text)) = token {
            let token = BearerToken::new(&text).map_err(|reason| HttpAuthError::Token {
                source_name,
                reason,
            })?;
            options = options.with_bearer(token);
        }
        for path in &self.ca_cert {
            let fail = |detail: String| HttpAuthError::CaCert {
                path: path.clone(),
                detail,
            };
            let pem = read_capped(path, MAX_CA_FILE_BYTES).map_err(fail)?;
            options = options
                .with_ca_pem(pem)
                .map_err(|e: CaCertError| fail(e.to_string()))?;
        }
        Ok(options.only_extra_roots(self.only_ca_cert))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(token_file: Option<PathBuf>, ca_cert: Vec<PathBuf>) -> HttpAuthArgs {
        HttpAuthArgs {
            token_env: None,
            token_file,
            ca_cert,
            only_ca_cert: false,
        }
    }

    #[test]
    fn c8_a_token_file_is_trimmed_and_errors_name_the_file_not_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("token");
        std::fs::write(&good, "file-secret-0123456789\n").unwrap();
        let options = args(Some(good), vec![]).options().unwrap();
        assert_eq!(
            options.bearer,
            Some(BearerToken::new("file-secret-0123456789").unwrap())
        );
        assert!(!format!("{options:?}").contains("file-secret"));

        let spaced = dir.path().join("spaced");
        std::fs::write(&spaced, "two words-secret\n").unwrap();
        let e = args(Some(spaced.clone()), vec![]).options().unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&spaced.display().to_string()), "{text}");
        assert!(!text.contains("words-secret"), "{text}");

        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let text = args(Some(empty), vec![]).options().unwrap_err().to_string();
        assert!(text.contains("empty"), "{text}");

        let missing = dir.path().join("missing");
        let text = args(Some(missing.clone()), vec![])
            .options()
            .unwrap_err()
            .to_string();
        assert!(text.contains(&missing.display().to_string()), "{text}");
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("not-a-cert.pem");
        std::fs::write(&bad, "hello\n").unwrap();
        let text = args(None, vec![bad]).options().unwrap_err().to_string();
        assert!(
            text.contains("not-a-cert.pem") && text.contains("no PEM certificate"),
            "{text}"
        );
    }
}
