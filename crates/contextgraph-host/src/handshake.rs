//! Handshake checks (H1–H3, H2, C5, the resolve rule, E1 fingerprint grammar)
//! and the [`ProviderDescriptor`] a successful handshake produces.
//!
//! The checks themselves live in [`contextgraph_types::validate::handshake_ack`];
//! this module turns its violations into a typed error that names the
//! provider and the anchors, and records what the host learnt about the
//! provider so consent and fan-out can decide what it may receive.

use std::fmt;

use contextgraph_types::validate::{self, Violation};
use contextgraph_types::{Capabilities, ErrorCode, ProviderInfo, PROTOCOL_VERSION};

use contextgraph_types::display_text::bounded;

/// How the host reaches a provider. Consent needs it: C4 makes every
/// non-loopback HTTP provider egress whatever it claims.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// A [`Provider`](contextgraph_provider_sdk::Provider) running inside the host process.
    InProcess,
    /// A child process speaking NDJSON on stdin/stdout.
    Stdio {
        /// The program spawned.
        program: String,
    },
    /// An HTTP endpoint.
    Http {
        /// The endpoint URL (never carries credentials; see C8).
        url: String,
        /// Whether the host is a loopback address (C4: if not, the provider is egress).
        loopback: bool,
    },
}

/// What a provider told the host at the handshake, after the checks passed.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderDescriptor {
    /// The provider id frames and consent are keyed on: the provider's name (H2).
    pub id: String,
    /// The protocol version it speaks (same family as the host's, H1).
    pub protocol_version: String,
    /// Identity and declared data flow.
    pub info: ProviderInfo,
    /// Declared capabilities.
    pub capabilities: Capabilities,
    /// How it is reached.
    pub transport: TransportKind,
}

impl ProviderDescriptor {
    /// Whether the host must treat the provider as egress: it said so (C1), or
    /// it is an HTTP provider on a non-loopback host (C4) — a remote
    /// provider's claim to keep data local cannot be checked from here.
    pub fn is_egress(&self) -> bool {
        self.info.data_flow.egress
            || matches!(
                self.transport,
                TransportKind::Http {
                    loopback: false,
                    ..
                }
            )
    }

    /// Whether `other` is the same provider identity as far as consent is
    /// concerned: a respawned process that reports another name, version, data
    /// flow or capabilities is a different provider and needs a new grant (C6).
    pub fn same_identity(&self, other: &ProviderDescriptor) -> bool {
        self.info == other.info
            && self.capabilities == other.capabilities
            && self.protocol_version == other.protocol_version
    }
}

/// Why a handshake failed. Every variant names the provider (its name when it
/// sent one, otherwise how it was reached) and, where a rule was broken, the anchor.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The ack broke one or more handshake rules.
    #[error("provider {provider}: handshake rejected: {}; fix the provider's handshake_ack (or remove the provider)", join(violations))]
    Rejected {
        /// The provider.
        provider: String,
        /// Every rule broken, with its anchor (H1, H2, H3, C5, E1, resolve).
        violations: Vec<Violation>,
    },
    /// The provider answered `incompatible_version` (H3).
    #[error("provider {provider}: H3: it does not speak this host's protocol family ({PROTOCOL_VERSION}) and said: {message}; upgrade one side")]
    IncompatibleVersion {
        /// The provider.
        provider: String,
        /// Its message, shortened.
        message: String,
    },
    /// The provider answered the handshake with another error.
    #[error("provider {provider}: H1: answered the handshake with error {code}: {message}; check the provider's configuration")]
    Refused {
        /// The provider.
        provider: String,
        /// Its code.
        code: ErrorCode,
        /// Its message, shortened.
        message: String,
    },
    /// The first line was not a `handshake_ack` — typically a provider that
    /// logs to stdout instead of stderr.
    #[error("provider {provider}: H1: the first line it wrote is not a handshake_ack ({detail}): {line:?}; a provider must write only protocol envelopes to stdout and log to stderr")]
    NotProtocol {
        /// The provider.
        provider: String,
        /// What was wrong with the line.
        detail: String,
        /// The start of the offending line, escaped.
        line: String,
    },
    /// No ack arrived in time.
    #[error("provider {provider}: H3: no handshake_ack within {timeout_ms} ms; the provider is hung or not a CGP provider{}", stderr_hint(stderr_tail))]
    Timeout {
        /// The provider.
        provider: String,
        /// The bound.
        timeout_ms: u128,
        /// The end of its stderr, if captured.
        stderr_tail: String,
    },
    /// The provider closed its output (or exited) before acknowledging.
    #[error(
        "provider {provider}: H1: it closed the connection before the handshake_ack{}",
        stderr_hint(stderr_tail)
    )]
    Closed {
        /// The provider.
        provider: String,
        /// The end of its stderr, if captured.
        stderr_tail: String,
    },
    /// Writing the handshake failed.
    #[error("provider {provider}: could not send the handshake: {detail}")]
    Io {
        /// The provider.
        provider: String,
        /// The I/O error.
        detail: String,
    },
}

fn stderr_hint(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with: {tail}")
    }
}

fn join(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl HandshakeError {
    /// The anchors broken, for tests and reports.
    pub fn anchors(&self) -> Vec<validate::Anchor> {
        match self {
            HandshakeError::Rejected { violations, .. } => {
                violations.iter().map(|v| v.anchor).collect()
            }
            HandshakeError::IncompatibleVersion { .. } | HandshakeError::Timeout { .. } => {
                vec![validate::Anchor::H3]
            }
            _ => vec![validate::Anchor::H1],
        }
    }
}

/// Longest `provider.name` accepted at the handshake, in bytes.
pub const MAX_NAME_BYTES: usize = 256;

/// Longest `provider.version` accepted at the handshake, in bytes.
pub const MAX_VERSION_BYTES: usize = 128;

/// Check a received ack and build the descriptor, or say which rules it broke.
pub fn check_ack(
    protocol_version: String,
    info: ProviderInfo,
    capabilities: Capabilities,
    transport: TransportKind,
    label: &str,
) -> Result<ProviderDescriptor, HandshakeError> {
    let mut violations =
        validate::handshake_ack(&protocol_version, &info, &capabilities, PROTOCOL_VERSION);
    // The name becomes the provider id, copied into every report and error,
    // and the version is pinned in consent records: a peer must not be able
    // to make either as large as a line.
    for (path, value, max) in [
        ("provider.name", &info.name, MAX_NAME_BYTES),
        ("provider.version", &info.version, MAX_VERSION_BYTES),
    ] {
        if value.len() > max {
            violations.push(validate::Violation {
                anchor: validate::Anchor::H2,
                path: path.to_owned(),
                message: format!(
                    "{} bytes long; this host accepts at most {max} (use a short identifier)",
                    value.len()
                ),
            });
        }
    }
    let provider = if info.name.trim().is_empty() {
        label.to_owned()
    } else {
        bounded(&info.name, 128)
    };
    if !violations.is_empty() {
        return Err(HandshakeError::Rejected {
            provider,
            violations,
        });
    }
    Ok(ProviderDescriptor {
        id: info.name.clone(),
        protocol_version,
        info,
        capabilities,
        transport,
    })
}

/// The error for an `error` envelope received instead of an ack.
pub fn error_instead_of_ack(label: &str, code: Option<ErrorCode>, message: &str) -> HandshakeError {
    let message = bounded(message, 512);
    match ErrorCode::effective(code.as_ref()) {
        ErrorCode::IncompatibleVersion => HandshakeError::IncompatibleVersion {
            provider: label.to_owned(),
            message,
        },
        code => HandshakeError::Refused {
            provider: label.to_owned(),
            code,
            message,
        },
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportKind::InProcess => f.write_str("in-process"),
            TransportKind::Stdio { program } => write!(f, "stdio:{program}"),
            TransportKind::Http { url, .. } => write!(f, "http:{url}"),
        }
    }
}
