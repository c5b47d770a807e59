//! Shared fixtures: the misbehaving provider binary (built once per test
//! process), commands and hosts around it, and a scripted in-memory peer.
#![allow(dead_code)]

pub mod http_server;
pub mod peer;

use std::path::Path;
use std::time::Duration;

use contextgraph_host::{
    ConnectionOptions, Host, HostOptions, RespawnPolicy, StdioCommand, StdioOptions,
};
use contextgraph_types::ContextQuery;

/// Generous bound for things that should be quick; tests assert on much
/// smaller margins only where the rule is "prompt, not a timeout".
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Path of the misbehaving provider: this package's `host-fixture-misbehaving`
/// binary (built by cargo for these tests through the `test-fixture`
/// feature), so no test shells out to a nested `cargo build`.
pub fn misbehaving_binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_host-fixture-misbehaving"))
}

/// The misbehaving provider in `mode`, announcing itself as `name`.
pub fn misbehaving(mode: &str, name: &str) -> StdioCommand {
    StdioCommand::new(misbehaving_binary()).args(["--mode", mode, "--name", name])
}

/// Stdio options with test-sized bounds.
pub fn stdio_options() -> StdioOptions {
    let mut connection = ConnectionOptions::default();
    connection.handshake_timeout = PATIENCE;
    StdioOptions {
        connection,
        respawn: RespawnPolicy {
            enabled: true,
            initial_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(200),
        },
        ..StdioOptions::default()
    }
}

/// A host with one misbehaving provider per `(mode, name)`.
pub async fn host_with(providers: &[(&str, &str)]) -> Host {
    let mut host = Host::new(HostOptions::default());
    for (mode, name) in providers {
        host.add_stdio(misbehaving(mode, name), stdio_options())
            .await
            .unwrap_or_else(|e| panic!("adding {mode}: {e}"));
    }
    host
}

/// A query the built-in corpus answers with several frames.
pub fn retry_query() -> ContextQuery {
    ContextQuery::new("how is the retry policy configured?", 5, 4000)
}
