//! Why a request got no answer, and why a session closed.

/// Why a request got no answer. Each variant names the provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The deadline passed first.
    #[error("provider {provider}: no reply within the deadline ({after_ms} ms); the provider is slow or hung")]
    Timeout {
        /// The provider.
        provider: String,
        /// How long the request waited.
        after_ms: u128,
    },
    /// The session is closed: the provider exited, closed its output, or the
    /// host closed the session after a fault.
    #[error("provider {provider}: connection closed: {reason}")]
    Closed {
        /// The provider.
        provider: String,
        /// Why.
        reason: CloseReason,
    },
    /// A correlated provider answered with a missing or unknown id (H4).
    #[error("provider {provider}: H4: {detail}; the provider declared correlation but does not echo request ids, so its replies cannot be attributed — fix the provider or declare correlation: false")]
    Correlation {
        /// The provider.
        provider: String,
        /// What it sent.
        detail: String,
    },
    /// A lock-step provider still owes replies to timed-out requests, so the
    /// next reply cannot be trusted to answer the next request.
    #[error("provider {provider}: out of step: {owed} earlier request(s) timed out and their replies never arrived; restart the provider")]
    Desynchronised {
        /// The provider.
        provider: String,
        /// Replies still owed.
        owed: usize,
    },
    /// The reply could not be decoded.
    #[error("provider {provider}: R1: its reply is not a valid envelope: {detail}")]
    Malformed {
        /// The provider.
        provider: String,
        /// The decoder's reason.
        detail: String,
    },
    /// The provider wrote a line past the line cap that did not end (§1: one
    /// envelope per line), so nothing behind it can be read: the session is
    /// closed as broken rather than left wedged.
    #[error("provider {provider}: §1 line cap: it wrote a line of more than {line_bytes} bytes without a newline (the cap is {max_line_bytes}); the connection is broken and was closed and the provider will be restarted; a provider must keep each envelope under the cap (fix or report the provider: the cap is not configurable in cgp.toml)")]
    RunawayLine {
        /// The provider.
        provider: String,
        /// Bytes of the unfinished line when the session was closed.
        line_bytes: u64,
        /// The cap it ran past.
        max_line_bytes: usize,
    },
    /// The reply has the wrong type for the request (a `verified` for a query, …).
    #[error("provider {provider}: answered a {expected} request with a {got} envelope")]
    WrongReply {
        /// The provider.
        provider: String,
        /// The request type.
        expected: &'static str,
        /// The reply type received.
        got: String,
    },
}

/// Why a session closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CloseReason {
    /// The provider closed its output (it usually exited).
    #[error("the provider closed its output")]
    EndOfOutput,
    /// Reading or writing the pipes failed.
    #[error("I/O error: {0}")]
    Io(String),
    /// The host closed it after an H4 violation.
    #[error("closed after an H4 correlation violation")]
    CorrelationViolation,
    /// The host closed it because a lock-step session fell out of step.
    #[error("closed because the session fell out of step")]
    Desynchronised,
    /// The host shut it down.
    #[error("shut down by the host")]
    Shutdown,
    /// The provider wrote a line past the cap that never ended (§1).
    #[error("closed after the provider wrote a line past the line cap that did not end")]
    RunawayLine,
}
