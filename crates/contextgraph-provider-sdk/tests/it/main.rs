//! The integration tests of the provider SDK, in one test binary (one link
//! instead of one per file); one module per behaviour, the in-memory host
//! harness and schema checks in `common`.

mod common;
mod correlation;
mod file_provenance;
mod frame_builder;
mod handshake;
mod honesty_guard;
mod lockstep;
mod malformed_input;
mod packing;
mod panic_recovery;
mod query_before_handshake;
mod query_validation;
mod reference_session;
mod session;
mod shutdown;
mod verify;
