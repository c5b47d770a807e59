//! Consent: the durable store ([`store`]) and the gate that decides, from a
//! provider's descriptor, whether it may be sent a payload (C1, C2, C4, C6).
//!
//! The gate is default-deny. A provider the host must treat as egress —
//! because it said so, or because it is a non-loopback HTTP endpoint (C4) —
//! is sent nothing unless:
//! - it declared off-machine scopes and every one has a live scope receipt
//!   for this exact provider name and version (C6); or
//! - it declared no off-machine scope and there is a live egress grant for
//!   this exact name and version (C1, C2).
//!
//! Receipts and grants pin the version: a provider that now reports another
//! version needs a new grant. Expiry is compared as instants, so a receipt
//! that expired half a second ago is expired.

pub mod store;

use contextgraph_types::{EgressScope, Timestamp};
use serde::Serialize;

use crate::handshake::ProviderDescriptor;
pub use store::{
    ConsentLedger, ConsentRecord, ConsentStore, ConsentStoreError, Revocation, UnreadableLine,
};

/// What the gate decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ConsentDecision {
    /// The provider may be sent the query.
    Allowed,
    /// An egress provider with no live grant for this name and version (C1, C2).
    ConsentRequired {
        /// The provider id to grant for.
        provider_id: String,
        /// The name to pin.
        provider_name: String,
        /// The version to pin.
        provider_version: String,
        /// Why the existing records do not cover it.
        reason: String,
    },
    /// Off-machine scopes without live receipts (C6).
    ScopeReceiptsMissing {
        /// The provider id.
        provider_id: String,
        /// The name to pin.
        provider_name: String,
        /// The version to pin.
        provider_version: String,
        /// The scopes that need a receipt.
        scopes: Vec<EgressScope>,
    },
}

impl ConsentDecision {
    /// Whether the payload may be sent.
    pub fn is_allowed(&self) -> bool {
        matches!(self, ConsentDecision::Allowed)
    }
}

/// Decide whether `provider` may be sent a payload at `now` given `ledger`.
pub fn check(
    provider: &ProviderDescriptor,
    ledger: &ConsentLedger,
    now: Timestamp,
) -> ConsentDecision {
    if !provider.is_egress() {
        return ConsentDecision::Allowed;
    }
    let id = provider.id.as_str();
    let name = provider.info.name.as_str();
    let version = provider.info.version.as_str();
    if let Some(line) = ledger.unreadable_line_for(id) {
        return ConsentDecision::ConsentRequired {
            provider_id: id.to_owned(),
            provider_name: name.to_owned(),
            provider_version: version.to_owned(),
            reason: format!(
                "unknown — not granted: line {line} of the consent store cannot be read and may concern it \
                 (a revocation, say); fix or delete that line"
            ),
        };
    }
    let off_machine: Vec<&EgressScope> = provider.info.data_flow.off_machine_scopes().collect();
    if !off_machine.is_empty() {
        let missing: Vec<EgressScope> = off_machine
            .into_iter()
            .filter(|s| ledger.live_receipt(id, name, version, s, now).is_none())
            .cloned()
            .collect();
        if missing.is_empty() {
            return ConsentDecision::Allowed;
        }
        return ConsentDecision::ScopeReceiptsMissing {
            provider_id: id.to_owned(),
            provider_name: name.to_owned(),
            provider_version: version.to_owned(),
            scopes: missing,
        };
    }
    if ledger.live_grant(id, name, version, now).is_some() {
        return ConsentDecision::Allowed;
    }
    // N16: compared as whole identities (name and version), so the
    // message never shows the same identity before and after.
    let pinned = ledger.pinned_identities(id);
    let reason = if !pinned.is_empty() && !pinned.iter().any(|(n, v)| n == name && v == version) {
        let on_record: Vec<String> = pinned
            .iter()
            .map(|(n, v)| format!("{n:?} version {v}"))
            .collect();
        format!(
            "the grant on record is for {}, but the provider now reports {name:?} version {version}; a new name or version needs a new grant",
            on_record.join(", ")
        )
    } else if pinned.is_empty() {
        "no egress grant is recorded for it".to_owned()
    } else {
        "its grant has expired or is not yet in force".to_owned()
    };
    ConsentDecision::ConsentRequired {
        provider_id: id.to_owned(),
        provider_name: name.to_owned(),
        provider_version: version.to_owned(),
        reason,
    }
}
