//! The HTTP server adapter's integration tests, one test binary: one module
//! per behaviour, helpers in `../common` (shared with `test_request_log`,
//! which stays a binary of its own: it installs a process-wide tracing
//! subscriber, see its header).

#[path = "../common/mod.rs"]
mod common;

mod host_transport_tls;
mod http_server;
