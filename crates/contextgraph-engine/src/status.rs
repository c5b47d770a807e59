//! What `providers()` reports for each configured provider.

use std::time::Duration;

use contextgraph_host::consent::{self, ConsentDecision, ConsentLedger};
use contextgraph_host::ProviderDescriptor;
use contextgraph_types::{Capabilities, DataFlow, Timestamp};
use serde::{Serialize, Serializer};

/// A provider's handshake, consent state and health.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderStatus {
    /// The configured name.
    pub name: String,
    /// The key its frames and consent go under: its configured name, once
    /// it handshook.
    pub provider_id: Option<String>,
    /// The name it announced at the handshake (shown beside the key; two
    /// providers may announce the same one).
    pub announced_name: Option<String>,
    /// The version it reported.
    pub version: Option<String>,
    /// How it is reached: `in-process`, `stdio (<program>)`, `http (<url>)`.
    pub transport: String,
    /// What it declared it does with data.
    pub data_flow: Option<DataFlow>,
    /// What it declared it can do.
    pub capabilities: Option<Capabilities>,
    /// Whether it may be sent queries.
    pub consent: ConsentState,
    /// Its handshake latency when it is up, or why it is not.
    #[serde(serialize_with = "health")]
    pub health: Result<Duration, String>,
    /// Its budget weight.
    pub weight: u32,
    /// Its timeout.
    pub timeout_ms: u64,
}

fn health<S: Serializer>(h: &Result<Duration, String>, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    #[serde(tag = "status", rename_all = "snake_case")]
    enum Health<'a> {
        Ok { latency_ms: f64 },
        Error { error: &'a str },
    }
    match h {
        Ok(d) => Health::Ok {
            latency_ms: (d.as_secs_f64() * 1e4).round() / 10.0,
        },
        Err(e) => Health::Error { error: e },
    }
    .serialize(s)
}

/// Whether a provider may be sent a query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ConsentState {
    /// It keeps data on this machine: no consent needed.
    NotRequired,
    /// Egress, with live consent.
    Granted {
        /// The earliest expiry among the grants relied on (absent: until revoked).
        #[serde(skip_serializing_if = "Option::is_none")]
        expires_at: Option<String>,
        /// The scopes granted by receipt (empty: a plain egress grant).
        scopes: Vec<String>,
    },
    /// Egress without live consent (C1, C2, C6): nothing is sent to it.
    Required {
        /// Why the records on file do not cover it.
        reason: String,
        /// The exact command that grants it.
        command: String,
    },
    /// It never handshook, so what it needs is not known.
    Unknown,
}

/// The consent state of `descriptor` under `ledger`.
pub(crate) fn consent_state(
    descriptor: &ProviderDescriptor,
    ledger: &ConsentLedger,
    grant: &dyn Fn(&[String]) -> String,
) -> ConsentState {
    let now = Timestamp::now();
    let (id, name, version) = (
        descriptor.id.as_str(),
        descriptor.info.name.as_str(),
        descriptor.info.version.as_str(),
    );
    match consent::check(descriptor, ledger, now) {
        ConsentDecision::Allowed if !descriptor.is_egress() => ConsentState::NotRequired,
        ConsentDecision::Allowed => {
            let scopes: Vec<_> = descriptor
                .info
                .data_flow
                .off_machine_scopes()
                .cloned()
                .collect();
            let expiries: Vec<Option<String>> = if scopes.is_empty() {
                vec![ledger
                    .live_grant(id, name, version, now)
                    .and_then(|g| g.expires_at)]
            } else {
                scopes
                    .iter()
                    .map(|s| {
                        ledger
                            .live_receipt(id, name, version, s, now)
                            .and_then(|r| r.expires_at)
                    })
                    .collect()
            };
            ConsentState::Granted {
                expires_at: expiries
                    .into_iter()
                    .flatten()
                    .min_by_key(|e| Timestamp::parse(e).ok()),
                scopes: scopes.iter().map(|s| s.as_str().to_owned()).collect(),
            }
        }
        ConsentDecision::ConsentRequired { reason, .. } => ConsentState::Required {
            reason,
            command: grant(&[]),
        },
        ConsentDecision::ScopeReceiptsMissing { scopes, .. } => {
            let scopes: Vec<String> = scopes.iter().map(|s| s.as_str().to_owned()).collect();
            ConsentState::Required {
                reason: format!("no live consent receipt for {}", scopes.join(", ")),
                command: grant(&scopes),
            }
        }
    }
}
