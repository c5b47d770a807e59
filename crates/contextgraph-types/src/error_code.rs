//! The open error vocabulary and the host reaction each code calls for.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

use crate::serde_util::from_wire_str;

/// A machine-readable error code. The vocabulary is open: a code this crate
/// does not know is kept verbatim in [`Other`](Self::Other) (so it
/// round-trips) and *treated* as `internal` (X1). Vendor codes are `vendor:name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// Malformed or unintelligible request. Never retried.
    BadRequest,
    /// Requested kinds not served.
    UnsupportedKind,
    /// Requested representation not offered.
    UnsupportedRepresentation,
    /// Major families differ. Never retried; the provider is unusable.
    IncompatibleVersion,
    /// The budget is too small for any frame.
    BudgetUnsatisfiable,
    /// Transient overload or store down. Retried with backoff.
    Unavailable,
    /// The provider is tearing down.
    ShuttingDown,
    /// Provider fault.
    Internal,
    /// Any other code, verbatim.
    Other(String),
}

/// What a host does on receiving a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostReaction {
    /// Do not retry this request.
    DoNotRetry,
    /// Narrow the kinds requested, or skip the provider.
    NarrowOrSkip,
    /// Re-request with `full`, or skip.
    RequestFullOrSkip,
    /// Never retry; the provider is unusable in this session.
    Unusable,
    /// Raise the budget, or skip.
    RaiseBudgetOrSkip,
    /// Retry with backoff.
    RetryWithBackoff,
    /// Respawn the provider, or drop it.
    RespawnOrDrop,
    /// Report and count against the provider's health.
    ReportFault,
}

impl ErrorCode {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::UnsupportedKind => "unsupported_kind",
            ErrorCode::UnsupportedRepresentation => "unsupported_representation",
            ErrorCode::IncompatibleVersion => "incompatible_version",
            ErrorCode::BudgetUnsatisfiable => "budget_unsatisfiable",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::ShuttingDown => "shutting_down",
            ErrorCode::Internal => "internal",
            ErrorCode::Other(s) => s,
        }
    }

    /// Parse a wire string; never fails.
    pub fn from_wire(text: &str) -> Self {
        match text {
            "bad_request" => ErrorCode::BadRequest,
            "unsupported_kind" => ErrorCode::UnsupportedKind,
            "unsupported_representation" => ErrorCode::UnsupportedRepresentation,
            "incompatible_version" => ErrorCode::IncompatibleVersion,
            "budget_unsatisfiable" => ErrorCode::BudgetUnsatisfiable,
            "unavailable" => ErrorCode::Unavailable,
            "shutting_down" => ErrorCode::ShuttingDown,
            "internal" => ErrorCode::Internal,
            other => ErrorCode::Other(other.to_owned()),
        }
    }

    /// The code a host acts on: unknown codes (X1) and an absent code (X2,
    /// pass `None`) are `internal`. A host must never infer "safe to retry"
    /// from a code it does not understand.
    pub fn effective(code: Option<&ErrorCode>) -> ErrorCode {
        match code {
            None | Some(ErrorCode::Other(_)) => ErrorCode::Internal,
            Some(known) => known.clone(),
        }
    }

    /// The reaction the code calls for (unknown codes react as `internal`).
    pub fn reaction(&self) -> HostReaction {
        match self {
            ErrorCode::BadRequest => HostReaction::DoNotRetry,
            ErrorCode::UnsupportedKind => HostReaction::NarrowOrSkip,
            ErrorCode::UnsupportedRepresentation => HostReaction::RequestFullOrSkip,
            ErrorCode::IncompatibleVersion => HostReaction::Unusable,
            ErrorCode::BudgetUnsatisfiable => HostReaction::RaiseBudgetOrSkip,
            ErrorCode::Unavailable => HostReaction::RetryWithBackoff,
            ErrorCode::ShuttingDown => HostReaction::RespawnOrDrop,
            ErrorCode::Internal | ErrorCode::Other(_) => HostReaction::ReportFault,
        }
    }

    /// Whether a host may retry the request that got this code.
    pub fn is_retryable(&self) -> bool {
        matches!(self.reaction(), HostReaction::RetryWithBackoff)
    }

    /// Whether this is a vendor code (`vendor:name`, U3).
    pub fn is_vendor(&self) -> bool {
        matches!(self, ErrorCode::Other(s) if crate::scope::is_namespaced(s))
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        from_wire_str(deserializer, ErrorCode::from_wire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_codes_round_trip_verbatim_and_act_as_internal() {
        let code = ErrorCode::from_wire("acme:quota_exceeded");
        assert_eq!(code.as_str(), "acme:quota_exceeded");
        assert!(code.is_vendor());
        assert_eq!(ErrorCode::effective(Some(&code)), ErrorCode::Internal);
        assert_eq!(code.reaction(), HostReaction::ReportFault);
        assert!(!code.is_retryable());
    }

    #[test]
    fn an_absent_code_acts_as_internal() {
        assert_eq!(ErrorCode::effective(None), ErrorCode::Internal);
    }

    #[test]
    fn only_unavailable_is_retryable() {
        for code in [
            "bad_request",
            "unsupported_kind",
            "unsupported_representation",
            "incompatible_version",
            "budget_unsatisfiable",
            "shutting_down",
            "internal",
        ] {
            let c = ErrorCode::from_wire(code);
            assert_eq!(c.as_str(), code);
            assert!(!c.is_retryable(), "{code}");
        }
        assert!(ErrorCode::Unavailable.is_retryable());
        assert_eq!(
            ErrorCode::IncompatibleVersion.reaction(),
            HostReaction::Unusable
        );
    }
}
