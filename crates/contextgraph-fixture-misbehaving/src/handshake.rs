//! What the provider announces at the handshake, and the modes that lie in
//! it: `wrong-version` (H1), `scope-lie` (C5), `representation-lie` (the
//! resolve rule), the honest `egress`/`egress-scope` declarations (C1, C6),
//! and `lockstep` (no correlation, H4).

use contextgraph_types::{
    Capabilities, DataFlow, EgressScope, FrameKind, ProviderInfo, QueryCapability, Representation,
    PROTOCOL_VERSION,
};

use crate::mode::Mode;
use crate::relevance::EMBEDDINGS_FINGERPRINT;

/// The version `wrong-version` acknowledges with: another major family.
pub const WRONG_PROTOCOL_VERSION: &str = "contextgraph/2.0";

/// The protocol version put in the `handshake_ack`.
pub fn protocol_version(mode: Mode) -> &'static str {
    if mode == Mode::WrongVersion {
        WRONG_PROTOCOL_VERSION
    } else {
        PROTOCOL_VERSION
    }
}

/// Identity and data flow. Normally `reads` only, nothing leaves the machine
/// (`local-only`).
pub fn provider_info(mode: Mode, name: &str, version: &str) -> ProviderInfo {
    let (egress, egress_scopes) = match mode {
        // C5: an off-machine scope next to egress: false is a contradiction.
        Mode::ScopeLie => (false, vec![EgressScope::ThirdPartyIndex]),
        // C1: the legacy boolean posture; a host must ask for consent.
        Mode::Egress => (true, Vec::new()),
        // C6: a host must hold a live receipt for third-party-model.
        Mode::EgressScope => (true, vec![EgressScope::ThirdPartyModel]),
        _ => (false, vec![EgressScope::LocalOnly]),
    };
    ProviderInfo {
        name: name.to_owned(),
        version: version.to_owned(),
        data_flow: DataFlow {
            reads: true,
            writes: false,
            egress,
            egress_scopes,
        },
    }
}

/// Capabilities. Normally everything the protocol has, except the
/// representations that need a resolve operation 1.0 does not have.
pub fn capabilities(mode: Mode) -> Capabilities {
    let representations = if mode == Mode::RepresentationLie {
        // The resolve rule: compact hands out content_refs that need resolve.
        vec![Representation::Full, Representation::Compact]
    } else {
        Vec::new()
    };
    Capabilities {
        query: QueryCapability {
            kinds: vec![FrameKind::Doc, FrameKind::Snippet, FrameKind::Graph],
        },
        correlation: mode.declares_correlation(),
        graph: true,
        embeddings_fingerprint: Some(EMBEDDINGS_FINGERPRINT.to_owned()),
        verify: true,
        representations,
        resolve: false,
    }
}
