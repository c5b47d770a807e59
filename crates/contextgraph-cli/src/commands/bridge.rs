//! `cgp bridge mcp -- <command> [args…]`: an existing MCP server's resources
//! as a CGP provider on stdio, so a CGP host can use the MCP ecosystem.
//!
//! The MCP server is spawned and initialized first (a server that cannot
//! start is reported before any CGP byte is written); then the provider
//! SDK's runner serves `contextgraph_mcp::McpBridge` on stdin/stdout. How
//! resources become frames, the bounds and the verify semantics are
//! documented in `contextgraph_mcp::bridge`.

use std::ffi::OsString;
use std::time::Duration;

use clap::{Args, Subcommand};
use contextgraph_mcp::{BridgeOptions, McpBridge};
use contextgraph_provider_sdk::{serve, ServeError, ServeOptions};
use contextgraph_types::EgressScope;

use super::bridge_startup as startup;
use super::CommandError;

/// Arguments of `cgp bridge`.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// What to bridge.
    #[command(subcommand)]
    pub target: BridgeTarget,
}

/// The systems `cgp bridge` can expose as a CGP provider.
#[derive(Debug, Subcommand)]
pub enum BridgeTarget {
    /// An MCP server's resources as a CGP provider over stdio.
    Mcp(BridgeMcpArgs),
}

/// Arguments of `cgp bridge mcp`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  Bridge an MCP server that serves a folder's files as resources:
    cgp bridge mcp -- npx -y @modelcontextprotocol/server-filesystem ./docs

  Check the bridge against the conformance suite:
    cgp inspect stdio --strict -- cgp bridge mcp -- my-mcp-server --flag

  Declare that the MCP server sends data to a third-party index (consent then applies):
    cgp bridge mcp --egress --egress-scope third-party-index -- remote-mcp-server

Each resource becomes one frame (doc, or snippet for code by MIME type), with token_cost
and content_digest from its content and provenance to the resource URI (SHA-256 of the
content). verify reads the resource again. The bridge cannot see where the MCP server sends
data: declare it with --egress/--egress-scope (default: egress false, local-only).
Stdout is the CGP channel; the MCP server's stderr passes through to stderr.

Exit codes:
  0  the host sent shutdown or closed stdin
  1  failure: the MCP server could not start or initialize, or the data flow is inconsistent
  2  usage error")]
pub struct BridgeMcpArgs {
    // The help text is an attribute, not a doc comment, so `<server name>`
    // reaches `--help` as written and rustdoc does not read it as HTML.
    #[arg(
        long,
        help = "Provider name hosts key frames and consent on (default: mcp-<server name>)"
    )]
    pub name: Option<String>,
    /// Declare that the MCP server sends data off this machine (C3).
    #[arg(long)]
    pub egress: bool,
    /// Where data goes (local-only, org-tenant, third-party-index, third-party-model,
    /// vendor:name); repeatable. Off-machine scopes require --egress (C5).
    #[arg(long = "egress-scope", value_name = "SCOPE")]
    pub egress_scopes: Vec<String>,
    /// Most resources read per query.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_reads: u32,
    /// Largest resource accepted, in bytes (larger ones are skipped).
    #[arg(long, default_value_t = 1024 * 1024, value_parser = clap::value_parser!(u64).range(1..=16 * 1024 * 1024))]
    pub max_resource_bytes: u64,
    /// Timeout of each MCP call, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,
    /// The MCP server command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Run `cgp bridge`.
pub fn run(args: BridgeArgs) -> Result<(), CommandError> {
    match args.target {
        BridgeTarget::Mcp(args) => run_mcp(args),
    }
}

fn run_mcp(args: BridgeMcpArgs) -> Result<(), CommandError> {
    let Some((command, rest)) = args.command.split_first() else {
        return Err(
            "no MCP server command: put it after `--`, e.g. cgp bridge mcp -- my-mcp-server".into(),
        );
    };
    let call_timeout = Duration::from_millis(args.timeout_ms);
    let options = BridgeOptions {
        name: args.name,
        egress: args.egress,
        egress_scopes: args
            .egress_scopes
            .iter()
            .map(|s| EgressScope::from_wire(s.trim()))
            .collect(),
        max_reads: usize::try_from(args.max_reads).unwrap_or(32),
        max_resource_bytes: usize::try_from(args.max_resource_bytes).unwrap_or(1024 * 1024),
        call_timeout,
        request_deadline: call_timeout.saturating_mul(3),
        // Start-up is an MCP call too: --timeout-ms bounds it (it was a fixed 20 s).
        init_timeout: call_timeout,
        ..BridgeOptions::default()
    };
    let events = startup::Events::start();
    let (command, rest) = (command.clone(), rest.to_vec());
    let label = command.to_string_lossy().into_owned();
    let sender = events.sender();
    std::thread::spawn(move || {
        let _ = sender.send(startup::Event::Connected(Box::new(McpBridge::connect(
            command, rest, options,
        ))));
    });
    let (bridge, input) = match events.wait_for_bridge(&label, call_timeout) {
        startup::Outcome::Connected(bridge, input) => (*bridge, input),
        startup::Outcome::Failed(e) => return Err(e.into()),
        // The host sent `shutdown` before the MCP server was up: nothing
        // to serve, a clean exit (R2).
        startup::Outcome::Stopped => return Ok(()),
    };
    match serve(bridge, input, std::io::stdout(), ServeOptions::default()) {
        Ok(()) => Ok(()),
        // The host closed our stdout: it is gone, nothing left to tell it.
        Err(ServeError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.into()),
    }
}
