//! Bearer-token authentication (C8).
//!
//! The expected token is kept only as its SHA-256 digest, and a presented
//! token is hashed the same way before a constant-time comparison: neither
//! the content nor the length of the secret can be learnt from timing. The
//! token never appears in a `Debug`/`Display`, a log line or a response.

use std::fmt;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A bearer token the server requires in `Authorization: Bearer <token>`.
#[derive(Clone)]
pub struct AuthToken {
    digest: [u8; 32],
}

/// Why a token cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is empty after trimming surrounding whitespace.
    #[error("the bearer token is empty; put a random secret of at least 16 characters in it")]
    Empty,
    /// The token has characters an HTTP header cannot carry.
    #[error("the bearer token contains whitespace or non-printable/non-ASCII characters, which an Authorization header cannot carry; use letters, digits and punctuation only")]
    NotHeaderSafe,
}

impl AuthToken {
    /// A token from its text; surrounding whitespace (such as the newline at
    /// the end of a token file) is trimmed.
    pub fn new(secret: &str) -> Result<Self, TokenError> {
        let secret = secret.trim();
        if secret.is_empty() {
            return Err(TokenError::Empty);
        }
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::NotHeaderSafe);
        }
        Ok(AuthToken {
            digest: Sha256::digest(secret.as_bytes()).into(),
        })
    }

    /// Whether an `Authorization` header value carries this token. The
    /// scheme is matched case-insensitively; the comparison of the secret
    /// takes the same time whatever was presented.
    pub fn accepts(&self, header: Option<&[u8]>) -> bool {
        let Some(value) = header else {
            return false;
        };
        let presented = match value.get(..7) {
            Some(scheme) if scheme.eq_ignore_ascii_case(b"bearer ") => &value[7..],
            _ => return false,
        };
        let presented: [u8; 32] = Sha256::digest(presented.trim_ascii()).into();
        bool::from(self.digest.ct_eq(&presented))
    }
}

impl fmt::Debug for AuthToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuthToken([redacted])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c8_the_right_token_is_accepted_with_any_scheme_case() {
        let t = AuthToken::new("s3cret-token\n").unwrap();
        assert!(t.accepts(Some(b"Bearer s3cret-token")));
        assert!(t.accepts(Some(b"bearer s3cret-token")));
    }

    #[test]
    fn c8_a_wrong_missing_or_prefixed_token_is_refused() {
        let t = AuthToken::new("s3cret-token").unwrap();
        assert!(!t.accepts(None));
        assert!(!t.accepts(Some(b"Bearer s3cret-tokem")));
        assert!(!t.accepts(Some(b"Bearer s3cret-token-and-more")));
        assert!(!t.accepts(Some(b"Basic s3cret-token")));
        assert!(!t.accepts(Some(b"s3cret-token")));
        assert!(!t.accepts(Some(b"Bearer")));
    }

    #[test]
    fn c8_debug_never_shows_the_token() {
        let t = AuthToken::new("s3cret-token").unwrap();
        assert!(!format!("{t:?}").contains("s3cret"));
    }

    #[test]
    fn empty_or_header_unsafe_tokens_are_refused() {
        assert_eq!(AuthToken::new(" \n").unwrap_err(), TokenError::Empty);
        assert_eq!(
            AuthToken::new("two words").unwrap_err(),
            TokenError::NotHeaderSafe
        );
        assert_eq!(
            AuthToken::new("caf\u{e9}").unwrap_err(),
            TokenError::NotHeaderSafe
        );
    }
}
