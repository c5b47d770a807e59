//! The host suite's integration tests, one test binary for the crate (its
//! adversaries run as child processes of this crate's adversary binary).

mod host_suite;
