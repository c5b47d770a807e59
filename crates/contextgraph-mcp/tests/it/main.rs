//! The integration tests of `contextgraph-mcp`, one module per behaviour, in one
//! test binary (one link instead of one per file).

mod bridge;
mod common;
mod fuzz_replay;
mod server;
