//! The workspace's one bearer credential: what the host sends to an HTTP
//! provider and what the conformance suite sends to an HTTP target. One
//! type, so the same text is accepted (and trimmed) the same way on both
//! ends, and so that a token can never be printed by accident (C8).

use std::fmt;

/// A bearer credential. Its `Debug` and `Display` never show it (C8); the
/// secret is reachable only through [`BearerToken::expose`], whose name
/// makes every use visible in review.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

/// Why a text cannot be a bearer token. Never carries the text (C8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BearerTokenError {
    /// Nothing is left after trimming surrounding whitespace.
    #[error("the bearer token is empty")]
    Empty,
    /// A character an `Authorization` header cannot carry.
    #[error("the bearer token contains whitespace or non-printable/non-ASCII characters, which an Authorization header cannot carry")]
    NotHeaderSafe,
}

impl BearerToken {
    /// A token from its text. Surrounding whitespace (such as the newline at
    /// the end of a token file) is trimmed, exactly as `cgp serve
    /// --token-env/--token-file` trims the token it requires, so the same
    /// variable or file authenticates both ends. What is left must be
    /// printable ASCII without spaces, the only thing an `Authorization:
    /// Bearer` header can carry.
    pub fn new(secret: &str) -> Result<Self, BearerTokenError> {
        let secret = secret.trim();
        if secret.is_empty() {
            return Err(BearerTokenError::Empty);
        }
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(BearerTokenError::NotHeaderSafe);
        }
        Ok(BearerToken(secret.to_owned()))
    }

    /// The secret itself, for building the `Authorization` header (mark
    /// that header sensitive) or redacting an echo of it. Never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken([redacted])")
    }
}

impl fmt::Display for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cret-token-0123456789";

    #[test]
    fn tokens_are_trimmed_and_must_fit_a_header() {
        let token = BearerToken::new(&format!("  {SECRET}\r\n")).unwrap();
        assert_eq!(token.expose(), SECRET);
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
    fn debug_and_display_never_show_the_secret() {
        let token = BearerToken::new(SECRET).unwrap();
        let shown = format!("{token} {token:?} {:?}", Some(&token));
        assert!(!shown.contains(SECRET), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
        let err = BearerToken::new("bad token").unwrap_err();
        assert!(!err.to_string().contains("bad"), "{err}");
    }
}
