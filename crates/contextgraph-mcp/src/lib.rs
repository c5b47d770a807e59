//! MCP interop for the Context Graph Protocol, both ways.
//!
//! - [`server`]: `cgp mcp`, an MCP server over stdio whose tools
//!   (`get_context`, `list_providers`) give agents that speak MCP the
//!   composed, fenced, cited CGP context. It is generic over
//!   [`ContextService`], so the CLI plugs in the real engine and tests a
//!   fake.
//! - [`bridge`]: `cgp bridge mcp -- <command>`, the reverse: an MCP server's
//!   resources as a CGP [`Provider`](contextgraph_provider_sdk::Provider), with
//!   honest costs, digests and provenance to the resource URI.
//!
//! Everything a peer controls is bounded: tool arguments ([`args`]), result
//! size (the server's cap), resources listed and read, bytes per resource
//! and time per MCP call (the bridge's options).

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod args;
pub mod bridge;
#[doc(hidden)]
pub mod fuzz;
pub mod guard;
pub mod server;
pub mod service;
pub mod session;

pub use bridge::{BridgeError, BridgeOptions, McpBridge};
pub use server::{
    estimate_model_tokens, McpServeError, McpServer, McpServerOptions, DEFAULT_BUDGET,
    DEFAULT_MAX_RESULT_TOKENS, DEFAULT_READY_WAIT, DEFAULT_RESULT_TOKENS,
};
pub use service::{
    rank_by_score, ContextService, ContextToolReply, ContextToolRequest, FrameEntry, Health,
    Preparing, ProviderContribution, ProviderListing, Readiness, SessionReply,
};
pub use session::{session_key, SessionSlots};
