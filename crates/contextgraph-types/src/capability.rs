//! Handshake types: who a provider is, what it does with data, what it can do.
//!
//! [`DataFlow`] is the security-critical part: a host surfaces it before
//! consent and never auto-enables an `egress: true` provider (C1).

use serde::{Deserialize, Serialize};

use crate::frame::{FrameKind, Representation};
use crate::scope::EgressScope;
use crate::serde_util::null_as_default;

/// What a provider does with the data it is sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFlow {
    /// The provider sees workspace content in query payloads.
    #[serde(default, deserialize_with = "null_as_default")]
    pub reads: bool,
    /// The provider durably persists data derived from what it receives. A
    /// consent declaration, not a write API: "you may read" and "you may keep"
    /// are different grants and the user deserves to be asked for each.
    #[serde(default, deserialize_with = "null_as_default")]
    pub writes: bool,
    /// The provider sends anything off the machine. Gated behind explicit consent (C1, C2).
    #[serde(default, deserialize_with = "null_as_default")]
    pub egress: bool,
    /// Where served content goes. Empty (omitted on the wire) means only the
    /// boolean `egress` posture was declared.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub egress_scopes: Vec<EgressScope>,
}

impl DataFlow {
    /// The declared scopes whose content leaves the machine.
    pub fn off_machine_scopes(&self) -> impl Iterator<Item = &EgressScope> {
        self.egress_scopes.iter().filter(|s| s.is_off_machine())
    }

    /// C5: every scope is well-formed and no off-machine scope is declared
    /// alongside `egress: false`. (`egress: true` with no scopes is the legacy
    /// boolean contract and is consistent.)
    pub fn scopes_consistent(&self) -> bool {
        self.egress_scopes.iter().all(EgressScope::is_valid)
            && (self.egress || self.off_machine_scopes().next().is_none())
    }
}

/// Provider identity, reported in the `handshake_ack`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// Provider name; non-empty (H2). Hosts use it as the provider id.
    pub name: String,
    /// Provider version; non-empty (H2). Consent receipts pin it.
    pub version: String,
    /// What the provider does with data.
    pub data_flow: DataFlow,
}

/// What a provider can do, negotiated at the handshake.
///
/// Members from older drafts (`upsert`, `subscribe`, `query.filters`) are
/// unknown members and ignored (U1), so a provider still emitting them
/// handshakes fine. The flags are always serialized, as the reference
/// serializer does; absent or `null` reads as `false`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The retrieval surface.
    #[serde(default, deserialize_with = "null_as_default")]
    pub query: QueryCapability,
    /// The provider echoes a request `id` on its reply, so the host may
    /// pipeline (H4). Negotiated explicitly: a reply without an `id` from a
    /// provider that never declared it is legitimate lock-step, and from one
    /// that did it is a fault the host can name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub correlation: bool,
    /// The provider serves `graph` frames and relation edges; gates G3/G4.
    #[serde(default, deserialize_with = "null_as_default")]
    pub graph: bool,
    /// Identity of the embedding space indexed, `<model-id>/<dimensions>[/<normalization>]` (E1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings_fingerprint: Option<String>,
    /// The provider answers `verify` (V2). Absent means no: the host re-queries.
    #[serde(default, deserialize_with = "null_as_default")]
    pub verify: bool,
    /// Representations offered; empty (omitted) means `[full]`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub representations: Vec<Representation>,
    /// The provider can resolve a `content_ref`; required to advertise
    /// `compact` or `reference`. 1.0 has no resolve operation on the wire.
    #[serde(default, deserialize_with = "null_as_default")]
    pub resolve: bool,
}

impl Capabilities {
    /// The representations actually offered: the advertised list, or `[full]` when empty.
    pub fn offered_representations(&self) -> Vec<Representation> {
        if self.representations.is_empty() {
            vec![Representation::Full]
        } else {
            self.representations.clone()
        }
    }

    /// Whether the provider offers `rep` (an empty list offers exactly `full`).
    pub fn offers_representation(&self, rep: Representation) -> bool {
        if self.representations.is_empty() {
            rep == Representation::Full
        } else {
            self.representations.contains(&rep)
        }
    }

    /// Advertising `compact` or `reference` requires `resolve: true`: both hand
    /// the host a `content_ref` it may need to rehydrate.
    pub fn representations_consistent(&self) -> bool {
        self.resolve
            || !self
                .representations
                .iter()
                .any(|r| matches!(r, Representation::Compact | Representation::Reference))
    }
}

/// The retrieval surface a provider offers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryCapability {
    /// Frame kinds served, e.g. `["doc", "snippet"]`. Kept as [`FrameKind`] so a
    /// kind from a later minor round-trips verbatim.
    #[serde(default, deserialize_with = "null_as_default")]
    pub kinds: Vec<FrameKind>,
}

impl QueryCapability {
    /// Whether the provider declared it serves `kind`.
    pub fn serves(&self, kind: &FrameKind) -> bool {
        self.kinds.contains(kind)
    }
}

/// The dimension declared by a well-formed embedding fingerprint
/// (`<model-id>/<dimensions>[/<normalization>]`), or `None` when the
/// fingerprint is malformed. A provider uses it to reject vectors of the wrong
/// length (E1) instead of computing meaningless similarities.
pub fn fingerprint_dimensions(fingerprint: &str) -> Option<usize> {
    let mut parts = fingerprint.split('/');
    let model = parts.next()?;
    let dims = parts.next()?;
    let normalization = parts.next();
    if model.is_empty() || parts.next().is_some() || normalization == Some("") {
        return None;
    }
    if dims.is_empty() || !dims.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    dims.parse().ok()
}

/// E1: a host may send its embedding only when both fingerprints are equal
/// and non-empty. Model, dimension and normalization all change what a vector
/// means, so nothing short of equality is safe.
pub fn embedding_fingerprints_match(host: &str, provider: &str) -> bool {
    !host.is_empty() && host == provider
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_capability_members_parse_and_are_ignored() {
        let caps: Capabilities = serde_json_like(
            r#"{"query":{"kinds":["doc"],"filters":["language"]},"upsert":true,"subscribe":true,"graph":false}"#,
        );
        assert_eq!(caps.query.kinds, vec![FrameKind::Doc]);
        assert!(!caps.graph && !caps.verify && !caps.correlation);
    }

    #[test]
    fn fingerprint_dimensions_follow_the_grammar() {
        assert_eq!(
            fingerprint_dimensions("bge-small-en-v1.5/384/l2"),
            Some(384)
        );
        assert_eq!(
            fingerprint_dimensions("text-embedding-3-large/3072"),
            Some(3072)
        );
        for bad in [
            "bge",
            "bge/",
            "/384",
            "bge/x",
            "bge/384/",
            "bge/384/l2/extra",
            "",
        ] {
            assert_eq!(fingerprint_dimensions(bad), None, "{bad}");
        }
    }

    #[test]
    fn fingerprints_match_only_when_equal_and_non_empty() {
        assert!(embedding_fingerprints_match("m/384/l2", "m/384/l2"));
        assert!(!embedding_fingerprints_match("m/384", "m/384/l2"));
        assert!(!embedding_fingerprints_match("", ""));
    }

    #[test]
    fn compact_or_reference_without_resolve_is_inconsistent() {
        let mut caps = Capabilities {
            representations: vec![Representation::Full, Representation::Compact],
            ..Capabilities::default()
        };
        assert!(!caps.representations_consistent());
        caps.resolve = true;
        assert!(caps.representations_consistent());
        assert!(Capabilities::default().representations_consistent());
        assert!(Capabilities::default().offers_representation(Representation::Full));
        assert!(!Capabilities::default().offers_representation(Representation::Compact));
    }

    #[test]
    fn off_machine_scope_with_egress_false_is_inconsistent() {
        let mut flow = DataFlow {
            reads: true,
            egress_scopes: vec![EgressScope::ThirdPartyIndex],
            ..DataFlow::default()
        };
        assert!(!flow.scopes_consistent());
        flow.egress = true;
        assert!(flow.scopes_consistent());
        flow.egress_scopes = vec![EgressScope::Custom("nonamespace".into())];
        assert!(!flow.scopes_consistent());
        let local = DataFlow {
            egress_scopes: vec![EgressScope::LocalOnly],
            ..DataFlow::default()
        };
        assert!(local.scopes_consistent());
    }

    fn serde_json_like<T: serde::de::DeserializeOwned>(text: &str) -> T {
        serde_json::from_str(text).expect("parses")
    }
}
