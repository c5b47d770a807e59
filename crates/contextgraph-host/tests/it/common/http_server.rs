//! The loopback HTTP(S) test server for the HTTP transport tests: the
//! testkit's one copy (TLS with a CA and leaf generated in the test).

// `test_memory_bounds` links `common` too and serves no HTTP.
#[allow(unused_imports)]
pub use contextgraph_testkit::http_server::*;
