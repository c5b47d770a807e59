//! Transports: how envelopes reach a provider. They move bytes and enforce
//! byte and time bounds; they make no policy decisions.
//!
//! - [`stdio`]: a child process on pipes (the protocol then runs in
//!   [`crate::connection`]);
//! - [`http`]: one envelope per POST, with the C4/C7/C8 rules;
//! - [`in_process`]: a [`Provider`](contextgraph_provider_sdk::Provider) called directly.

pub mod http;
pub mod in_process;
pub mod stdio;
