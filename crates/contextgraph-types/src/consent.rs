//! Consent receipts: the host's durable, append-only record of who allowed
//! what to leave the machine (C1, C2, C6).

use serde::{Deserialize, Serialize};

use crate::scope::EgressScope;
use crate::time::Timestamp;

/// Who granted consent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Grantor {
    /// A person or an automated policy.
    pub kind: GrantorKind,
    /// Who: a user name, a policy id.
    pub id: String,
}

/// The two kinds of grantor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantorKind {
    /// A person said yes.
    Human,
    /// A configured policy said yes.
    Policy,
}

/// The one consent record: a person or policy allowed a provider something,
/// pinning the provider's name and version at grant time, so a provider that
/// later reports another version needs a new grant (C6).
///
/// Without a `scope` it is an *egress grant*: the provider may receive
/// payloads at all (C1, C2). With one it is a *scope receipt*: content may
/// go where that scope says (C6). One type for both, so liveness, pinning
/// and display follow one rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConsentReceipt {
    /// The provider the grant is for.
    pub provider_id: String,
    /// The scope granted; absent for an egress grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<EgressScope>,
    /// Provider name at grant time.
    pub provider_name: String,
    /// Provider version at grant time.
    pub provider_version: String,
    /// Who granted.
    pub grantor: Grantor,
    /// When (F4).
    pub granted_at: String,
    /// When the grant lapses (F4); absent means until revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

impl ConsentReceipt {
    /// Whether the receipt is live at `now`: granted at or before `now` and
    /// not yet expired, compared as instants. A receipt whose timestamps do
    /// not parse is never live — an unreadable grant is no grant.
    pub fn is_live_at(&self, now: Timestamp) -> bool {
        let Ok(granted) = Timestamp::parse(&self.granted_at) else {
            return false;
        };
        if granted > now {
            return false;
        }
        match &self.expires_at {
            None => true,
            Some(e) => Timestamp::parse(e).is_ok_and(|expires| now < expires),
        }
    }

    /// Whether this is an egress grant (no scope) rather than a scope receipt.
    pub fn is_egress_grant(&self) -> bool {
        self.scope.is_none()
    }

    /// Whether the record is for this exact provider identity and version.
    pub fn pins(&self, provider_id: &str, name: &str, version: &str) -> bool {
        self.provider_id == provider_id
            && self.provider_name == name
            && self.provider_version == version
    }

    /// Whether the receipt covers `scope` for this exact provider identity and version.
    pub fn covers(
        &self,
        provider_id: &str,
        name: &str,
        version: &str,
        scope: &EgressScope,
    ) -> bool {
        self.pins(provider_id, name, version) && self.scope.as_ref() == Some(scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(expires_at: Option<&str>) -> ConsentReceipt {
        ConsentReceipt {
            provider_id: "cloud-docs".into(),
            scope: Some(EgressScope::ThirdPartyModel),
            provider_name: "cloud-docs".into(),
            provider_version: "1.4.0".into(),
            grantor: Grantor {
                kind: GrantorKind::Human,
                id: "ada".into(),
            },
            granted_at: "2026-01-01T00:00:00Z".into(),
            expires_at: expires_at.map(str::to_owned),
        }
    }

    #[test]
    fn expiry_is_compared_as_an_instant_to_the_fraction_of_a_second() {
        let r = receipt(Some("2026-06-01T00:00:00.5Z"));
        let t = |s: &str| Timestamp::parse(s).unwrap();
        assert!(r.is_live_at(t("2026-06-01T00:00:00.4Z")));
        assert!(!r.is_live_at(t("2026-06-01T00:00:00.5Z")));
        assert!(!r.is_live_at(t("2026-06-01T00:00:00.6Z")));
        assert!(
            !r.is_live_at(t("2025-12-31T23:59:59Z")),
            "not live before it was granted"
        );
        assert!(receipt(None).is_live_at(t("2099-01-01T00:00:00Z")));
        assert!(!receipt(Some("garbage")).is_live_at(t("2026-02-01T00:00:00Z")));
    }

    #[test]
    fn a_receipt_pins_name_and_version() {
        let r = receipt(None);
        assert!(r.covers(
            "cloud-docs",
            "cloud-docs",
            "1.4.0",
            &EgressScope::ThirdPartyModel
        ));
        assert!(!r.covers(
            "cloud-docs",
            "cloud-docs",
            "1.5.0",
            &EgressScope::ThirdPartyModel
        ));
        assert!(!r.covers("cloud-docs", "cloud-docs", "1.4.0", &EgressScope::OrgTenant));
        let grant = ConsentReceipt { scope: None, ..r };
        assert!(grant.is_egress_grant());
        assert!(grant.pins("cloud-docs", "cloud-docs", "1.4.0"));
        assert!(
            !grant.covers(
                "cloud-docs",
                "cloud-docs",
                "1.4.0",
                &EgressScope::ThirdPartyModel
            ),
            "an egress grant covers no scope"
        );
    }

    #[test]
    fn receipts_serialize_with_the_wire_names() {
        let json = serde_json::to_value(receipt(None)).unwrap();
        assert_eq!(json["grantor"]["kind"], "human");
        assert_eq!(json["scope"], "third-party-model");
        assert!(json.get("expires_at").is_none());
        let grant = ConsentReceipt {
            scope: None,
            ..receipt(None)
        };
        let json = serde_json::to_value(grant).unwrap();
        assert!(
            json.get("scope").is_none(),
            "an egress grant has no scope member"
        );
    }
}
