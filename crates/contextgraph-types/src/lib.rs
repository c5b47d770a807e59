//! Wire types of the Context Graph Protocol (CGP), `contextgraph/1.0-draft`.
//!
//! This crate is the protocol's vocabulary and nothing else: plain serde types,
//! the rules that can be checked on a value in isolation, and no I/O, no async,
//! no hashing (so it depends on `serde` alone). Crates that can hash plug a
//! [`ContentHasher`] into validation to have content digests recomputed.
//!
//! The module split follows the protocol:
//! - [`capability`], [`scope`], [`version`]: what a provider is, negotiated at the handshake;
//! - [`query`]: the retrieval request and its result;
//! - [`frame`]: the unit of exchange;
//! - [`identity`], [`verify`]: frame identity (FrameId) and cache revalidation;
//! - [`error_code`]: the open error vocabulary;
//! - [`usage`], [`attribution`], [`consent`]: host-side records;
//! - [`budget`], [`time`], [`digest`]: the small rules (B3, F4, F5/D1) everything else leans on;
//! - [`validate`]: one `validate` per frame, query result and handshake ack that
//!   reports every violation with its requirement anchor.
//!
//! Serialization follows the wire's omission rules exactly: absent optionals
//! are omitted (never `null`), empty lists that the protocol omits are omitted,
//! and a `full` frame omits `representation`. Deserialization is lenient the
//! way the protocol demands: unknown members are ignored (U1), `null` is
//! accepted wherever a member is optional, and a frame whose `kind` is unknown
//! still parses (U2) as [`FrameKind::Other`].

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod attribution;
pub mod budget;
pub mod capability;
pub mod consent;
pub mod credential;
pub mod digest;
pub mod display_text;
pub mod error_code;
pub mod file_uri;
pub mod frame;
pub mod identity;
pub mod limits;
pub mod loopback;
pub mod query;
pub mod scope;
pub mod secrets;
pub mod sha256;
pub mod time;
pub mod usage;
pub mod validate;

mod anchor;
pub mod verify;
pub mod version;

mod serde_util;

pub use attribution::{AttributionError, AttributionRecord};
pub use budget::{
    budget_tokens_for_model_tokens, model_tokens_for_budget_tokens, token_cost_for,
    token_cost_of_len, DEFAULT_SAFETY_FACTOR,
};
pub use capability::{
    embedding_fingerprints_match, fingerprint_dimensions, Capabilities, DataFlow, ProviderInfo,
    QueryCapability,
};
pub use consent::{ConsentReceipt, Grantor, GrantorKind};
pub use credential::{BearerToken, BearerTokenError};
pub use digest::{is_sha256_digest, LineRange};
pub use error_code::{ErrorCode, HostReaction};
pub use frame::{
    ContentFidelity, ContentRef, ContextFrame, FrameEmbedding, FrameKind, InlineContentRequirement,
    Provenance, Relation, Representation, Transform,
};
pub use identity::FrameId;
pub use query::{ContextQuery, ContextQueryResult};
pub use scope::EgressScope;
pub use time::{Timestamp, TimestampError};
pub use usage::{ProviderUsage, ServedFrame, UsageReport};
pub use validate::{Anchor, ContentHasher, QueryContext, Violation};
pub use verify::{FrameVerdict, Verdict, VerifyRequest, VerifyResponse};
pub use version::{protocol_family, versions_compatible, ProtocolVersion, PROTOCOL_VERSION};
