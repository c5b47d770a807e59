//! The integration tests of `contextgraph-host`, one module per behaviour, in one
//! test binary (one link instead of one per file). `tests/test_memory_bounds.rs`
//! is separate: it measures the process's resident set.

mod audit_quarantine;
mod common;
mod consent;
mod correlation;
mod crash;
mod deadline;
mod environment;
mod handshake;
mod http;
mod lockstep_resync;
mod peer_wire;
mod repair;
mod runaway_line;
mod usage;
mod verify_cache;
mod wire_noise;
