//! The integration tests of `contextgraph-config`, in one test binary; one
//! module per behaviour.

mod load;
mod fuzz_replay;
