//! The host-level error: what can go wrong managing providers, as opposed to
//! one provider's outcome in a fan-out (which is a
//! [`ProviderOutcome`](crate::fanout::ProviderOutcome), not an error).

use crate::client::RequestError;
use crate::consent::ConsentStoreError;

/// A host operation failed. Every variant names the provider (or the file)
/// and what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// Reaching, spawning or handshaking the provider failed.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// Two providers reported the same name: frames and consent are keyed on
    /// it, so the second is refused.
    #[error("provider {provider}: another provider with this name is already added; provider ids must be unique (rename one)")]
    DuplicateProvider {
        /// The name.
        provider: String,
    },
    /// No provider with this id.
    #[error("provider {provider}: not known to this host")]
    UnknownProvider {
        /// The id.
        provider: String,
    },
    /// The consent store failed.
    #[error(transparent)]
    Consent(#[from] ConsentStoreError),
}

impl From<crate::handshake::HandshakeError> for HostError {
    fn from(e: crate::handshake::HandshakeError) -> Self {
        HostError::Request(e.into())
    }
}
