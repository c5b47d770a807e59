//! Host runtime of the Context Graph Protocol (CGP): the agent side that
//! asks providers for frames, audits every answer and keeps consent.
//!
//! # Layers
//!
//! - [`transport`]: how bytes reach a provider — a child process on stdio
//!   ([`transport::stdio`]), and a [`Provider`](contextgraph_provider_sdk::Provider)
//!   called in-process ([`transport::in_process`]), and HTTP with TLS
//!   ([`transport::http`], C4/C7/C8). No policy.
//! - [`connection`] and [`handshake`]: the NDJSON session — handshake checks
//!   (H1–H3, H2, C5, resolve, E1), correlation (H4) or strict lock-step with
//!   resynchronisation, deadlines, tolerance of garbage on the wire.
//! - [`client`]: one object-safe trait, [`ProviderClient`], over every
//!   transport, with crash reports and respawn for stdio providers.
//! - [`consent`]: the durable append-only store and the default-deny gate
//!   (C1, C2, C4, C6).
//! - [`audit`]: the runtime re-checks of every answer and the quarantine (B2);
//!   [`repair`]: the few faults the host repairs instead (default policy).
//! - [`fanout`]: [`Host`] and [`Host::query_all`], with a typed outcome per provider.
//! - [`cache`]: the frame cache and [`Host::revalidate`] (V1–V4, D3, D4).
//! - [`usage`]: usage reports (UR1) and attribution records (A1–A3).
//!
//! Everything a provider controls is bounded: line length (the codec's cap),
//! requests in flight, time (every request has a deadline), stderr kept, and
//! the length of any provider text copied into an error.
#![warn(missing_docs)]

pub mod audit;
pub mod cache;
pub mod client;
pub mod connection;
pub mod consent;
pub mod error;
pub mod fanout;
pub mod handshake;
mod keyed;
mod line_watch;
pub mod repair;
pub mod transport;
pub mod usage;

pub use audit::{audit_answer, audit_answer_with, AuditVerdict, DroppedFrame};
pub use cache::{EvictionReason, FrameCache, RevalidationReport};
pub use client::{ProviderClient, RequestError, RespawnPolicy, StdioOptions, StdioProvider};
pub use connection::{Answer, Connection, ConnectionError, ConnectionOptions, Diagnostics};
pub use consent::{ConsentDecision, ConsentRecord, ConsentStore, Revocation};
pub use error::HostError;
pub use fanout::{FanOutReport, Host, HostOptions, ProviderOutcome, ProviderReport};
pub use handshake::{HandshakeError, ProviderDescriptor, TransportKind};
pub use repair::{AuditPolicy, Repair, RepairKind};
pub use transport::http::{
    BearerToken, BearerTokenError, HttpConfig, HttpError, HttpProviderClient,
};
pub use transport::in_process::InProcessProvider;
pub use transport::stdio::StdioCommand;
pub use usage::{attribution_records, usage_report};
