//! Reading an HTTP provider's bearer token from where the configuration
//! says it is. Errors name the provider and the variable or file, never
//! the token (C8).

use std::io::Read;
use std::path::PathBuf;

use crate::model::TokenSource;

/// Longest token file read.
const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// Why a token could not be read. Never contains the token.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// The variable is unset or empty.
    #[error("provider {provider}: token_env names {var}, which is not set; export {var} before running cgp")]
    EnvUnset {
        /// The provider.
        provider: String,
        /// The variable.
        var: String,
    },
    /// The variable holds something that cannot go in an HTTP header.
    #[error("provider {provider}: the token in {var} is not usable (it must be printable ASCII without spaces)")]
    EnvUnusable {
        /// The provider.
        provider: String,
        /// The variable.
        var: String,
    },
    /// The file could not be read.
    #[error("provider {provider}: cannot read token_file {}: {detail}", path.display())]
    FileUnreadable {
        /// The provider.
        provider: String,
        /// The file.
        path: PathBuf,
        /// The OS error.
        detail: String,
    },
    /// The file is empty, too large, or holds something unusable.
    #[error("provider {provider}: token_file {} {problem}", path.display())]
    FileUnusable {
        /// The provider.
        provider: String,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: &'static str,
    },
}

/// Whether `token` is what the one bearer-token type accepts (printable
/// ASCII, no whitespace), so config and transport agree on the rule.
fn usable(token: &str) -> bool {
    contextgraph_types::BearerToken::new(token).is_ok()
}

impl TokenSource {
    /// Read the token for `provider`. A file's surrounding whitespace (the
    /// trailing newline editors add) is not part of the token.
    pub fn read(&self, provider: &str) -> Result<String, TokenError> {
        match self {
            TokenSource::Env(var) => {
                let value = std::env::var_os(var)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| TokenError::EnvUnset {
                        provider: provider.to_owned(),
                        var: var.clone(),
                    })?;
                match value.into_string() {
                    Ok(t) if usable(t.trim()) => Ok(t.trim().to_owned()),
                    _ => Err(TokenError::EnvUnusable {
                        provider: provider.to_owned(),
                        var: var.clone(),
                    }),
                }
            }
            TokenSource::File(path) => {
                let unreadable = |e: std::io::Error| TokenError::FileUnreadable {
                    provider: provider.to_owned(),
                    path: path.clone(),
                    detail: e.to_string(),
                };
                let unusable = |problem| TokenError::FileUnusable {
                    provider: provider.to_owned(),
                    path: path.clone(),
                    problem,
                };
                let file = std::fs::File::open(path).map_err(unreadable)?;
                let mut bytes = Vec::new();
                file.take(MAX_TOKEN_FILE_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .map_err(unreadable)?;
                if bytes.len() as u64 > MAX_TOKEN_FILE_BYTES {
                    return Err(unusable("is over 64 KiB; it should hold just the token"));
                }
                let text = String::from_utf8(bytes)
                    .map_err(|_| unusable("is not text; it should hold just the token"))?;
                let token = text.trim();
                if token.is_empty() {
                    return Err(unusable("is empty; write the token into it"));
                }
                if !usable(token) {
                    return Err(unusable(
                        "holds more than one token-like word or a control character; it should hold just the token",
                    ));
                }
                Ok(token.to_owned())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c8_a_token_file_is_read_trimmed_and_errors_never_show_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, "s3cret-token\n").unwrap();
        assert_eq!(
            TokenSource::File(path.clone()).read("search").unwrap(),
            "s3cret-token"
        );
        std::fs::write(&path, "s3cret token\n").unwrap();
        let err = TokenSource::File(path.clone()).read("search").unwrap_err();
        assert!(!err.to_string().contains("s3cret"), "{err}");
        std::fs::write(&path, "\n\n").unwrap();
        let err = TokenSource::File(path).read("search").unwrap_err();
        assert!(err.to_string().contains("is empty"), "{err}");
        let err = TokenSource::File(dir.path().join("missing"))
            .read("search")
            .unwrap_err();
        assert!(
            err.to_string().contains("provider search") && err.to_string().contains("missing"),
            "{err}"
        );
    }

    #[test]
    fn an_unset_token_variable_names_the_variable() {
        let err = TokenSource::Env("CGP_TEST_SURELY_UNSET_TOKEN_VAR".into())
            .read("search")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("export CGP_TEST_SURELY_UNSET_TOKEN_VAR"),
            "{err}"
        );
    }
}
