//! The integration tests of `contextgraph-config`, in one test binary; one
//! module per behaviour.

mod fuzz_replay;
mod load;
mod trust;
