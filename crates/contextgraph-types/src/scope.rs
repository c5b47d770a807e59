//! Egress scopes: *where* a provider's served content may go (C4–C6).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// An egress scope, serialized as a flat string.
///
/// Four base classes are normative; anything else is a namespaced custom scope
/// `vendor:name` (a `:` with non-empty sides, U3). Every scope but
/// [`LocalOnly`](Self::LocalOnly) is off-machine, and so is an unknown custom
/// scope: a host that does not understand where content goes must assume it leaves.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EgressScope {
    /// `local-only`: content stays on this machine.
    LocalOnly,
    /// `org-tenant`: content goes to infrastructure the user's organisation controls.
    OrgTenant,
    /// `third-party-index`: content is indexed by a third party.
    ThirdPartyIndex,
    /// `third-party-model`: content is sent to a third-party model.
    ThirdPartyModel,
    /// Any other string, kept verbatim. Valid only when namespaced (`vendor:name`).
    Custom(String),
}

impl EgressScope {
    /// The wire string of this scope.
    pub fn as_str(&self) -> &str {
        match self {
            EgressScope::LocalOnly => "local-only",
            EgressScope::OrgTenant => "org-tenant",
            EgressScope::ThirdPartyIndex => "third-party-index",
            EgressScope::ThirdPartyModel => "third-party-model",
            EgressScope::Custom(s) => s,
        }
    }

    /// Parse a wire string (never fails: unknown strings become [`Custom`](Self::Custom)).
    pub fn from_wire(text: &str) -> Self {
        match text {
            "local-only" => EgressScope::LocalOnly,
            "org-tenant" => EgressScope::OrgTenant,
            "third-party-index" => EgressScope::ThirdPartyIndex,
            "third-party-model" => EgressScope::ThirdPartyModel,
            other => EgressScope::Custom(other.to_owned()),
        }
    }

    /// Whether content under this scope leaves the machine. Only `local-only` stays.
    pub fn is_off_machine(&self) -> bool {
        !matches!(self, EgressScope::LocalOnly)
    }

    /// Whether the scope is well-formed: a base class, or `vendor:name` with
    /// non-empty sides (U3).
    pub fn is_valid(&self) -> bool {
        match self {
            EgressScope::Custom(s) => is_namespaced(s),
            _ => true,
        }
    }
}

/// Whether `text` is a vendor-namespaced name: a `:` with non-empty text on both sides (U3).
pub fn is_namespaced(text: &str) -> bool {
    match text.split_once(':') {
        Some((vendor, name)) => !vendor.is_empty() && !name.is_empty(),
        None => false,
    }
}

impl fmt::Display for EgressScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EgressScope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EgressScope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::serde_util::from_wire_str(deserializer, EgressScope::from_wire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_only_stays_on_the_machine() {
        assert!(!EgressScope::LocalOnly.is_off_machine());
        for s in [
            "org-tenant",
            "third-party-index",
            "third-party-model",
            "acme:vault",
            "weird",
        ] {
            assert!(EgressScope::from_wire(s).is_off_machine(), "{s}");
        }
    }

    #[test]
    fn custom_scopes_must_be_namespaced() {
        assert!(EgressScope::from_wire("acme:vault").is_valid());
        assert!(!EgressScope::from_wire("acme").is_valid());
        assert!(!EgressScope::from_wire(":vault").is_valid());
        assert!(!EgressScope::from_wire("acme:").is_valid());
        assert!(EgressScope::from_wire("local-only").is_valid());
    }

    #[test]
    fn unknown_scopes_round_trip_verbatim() {
        for s in ["local-only", "third-party-model", "acme:vault", "weird"] {
            assert_eq!(EgressScope::from_wire(s).as_str(), s);
        }
    }
}
