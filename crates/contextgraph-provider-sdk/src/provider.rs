//! What a provider author implements: the [`Provider`] trait, and the
//! [`ProviderError`] it reports instead of frames.

use contextgraph_types::{
    Capabilities, ContextQuery, ContextQueryResult, ErrorCode, FrameVerdict, ProviderInfo, Verdict,
    VerifyRequest, VerifyResponse,
};

/// A failure a provider reports instead of frames: a code for the machine and
/// a message for a person (sent as an `error` envelope).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ProviderError {
    /// Machine-readable classification.
    pub code: ErrorCode,
    /// Human-readable detail.
    pub message: String,
}

impl ProviderError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ProviderError {
            code,
            message: message.into(),
        }
    }

    /// `bad_request`: the request is malformed or unintelligible (never retried).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    /// `internal`: a provider fault.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// `unavailable`: transient; the host retries with backoff.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unavailable, message)
    }

    /// `unsupported_kind`: none of the requested kinds is served (Q1); the
    /// host narrows its kinds or skips this provider.
    pub fn unsupported_kind(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::UnsupportedKind, message)
    }

    /// `budget_unsatisfiable`: not even the smallest candidate fits
    /// `max_tokens`; the host raises the budget or skips this provider.
    pub fn budget_unsatisfiable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BudgetUnsatisfiable, message)
    }
}

/// What a provider author implements. Everything protocol-shaped (handshake,
/// correlation, malformed input, shutdown) is the runner's job, not yours.
///
/// Methods take `&self` and the trait requires `Send + Sync` because a
/// runner serves several in-flight queries at once when the provider declares
/// correlation.
pub trait Provider: Send + Sync + 'static {
    /// Identity and data flow, sent in the `handshake_ack`. Hosts show
    /// `name` to a person; the `provider_id` they key frames and consent on
    /// is their own label for this provider, which may differ from `name`.
    fn info(&self) -> ProviderInfo;

    /// Capabilities, sent in the `handshake_ack`.
    fn capabilities(&self) -> Capabilities;

    /// Answer a query. Build frames with the helpers in this crate so costs,
    /// digests and provenance are honest by construction, and pack them with
    /// the packing helper so the budget is honoured and `truncated` is true
    /// exactly when something was left out.
    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError>;

    /// Revalidate held frames. The default answers `unknown` for every
    /// identity, which is always honest (hosts evict on anything but `valid`,
    /// V3). Override it only with a real comparison of digests, by frame id
    /// and digest: an identity's `provider_id` is the host's label, echoed
    /// back, never a reason for `unknown` (see [`verify_each`](crate::verify_each)).
    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        VerifyResponse {
            verdicts: request
                .frames
                .iter()
                .map(|id| FrameVerdict {
                    frame: id.clone(),
                    verdict: Verdict::Unknown,
                })
                .collect(),
        }
    }
}
