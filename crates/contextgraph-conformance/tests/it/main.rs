//! The provider suite's integration tests, one test binary for the crate:
//! one module per behaviour, fixtures in `common`. The providers under test
//! run in an in-test HTTP server, so no test needs a process of its own.
//! The suite's runs against the docs provider's binary and the misbehaving
//! fixture's live in those crates' tests (`tests/it/suite*.rs`), where cargo
//! gives the binaries' paths.

mod common;

mod http_target;
