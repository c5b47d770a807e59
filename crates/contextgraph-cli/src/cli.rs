//! The top-level command line: `cgp <COMMAND>`.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::commands::bridge::BridgeArgs;
use crate::commands::cache::CacheArgs;
use crate::commands::completions::{CompletionsArgs, ManArgs};
use crate::commands::config::ConfigArgs;
use crate::commands::consent::ConsentArgs;
use crate::commands::context::ContextArgs;
use crate::commands::index::IndexArgs;
use crate::commands::inspect::InspectArgs;
use crate::commands::mcp::McpArgs;
use crate::commands::new::NewArgs;
use crate::commands::providers::ProvidersArgs;
use crate::commands::serve::ServeArgs;
use crate::commands::trust::TrustArgs;
use crate::output::{ColorChoice, ColorMode};

/// Shown after `--help`: examples first, because that is what people look for.
const AFTER_HELP: &str = "\
Examples:
  The context for a goal from the current directory, under 8000 model tokens:
    cgp context \"how does the retry loop back off?\"

  Serve the documents of ./docs to a host that spawns this command:
    cgp serve docs ./docs

  Serve this workspace over HTTP on loopback, with a bearer token from the environment:
    CGP_TOKEN=… cgp serve workspace . --http 127.0.0.1:8750 --token-env CGP_TOKEN

  See which providers cgp.toml configures, and grant one consent:
    cgp providers
    cgp consent grant <provider> --scope <scope>

  Give an MCP client (an editor, a chat app) context through cgp:
    cgp mcp

  Check a provider against the conformance suite (exit 1 if a check fails):
    cgp inspect stdio --strict -- contextgraph-provider-docs ./docs

  Talk to it by hand (one JSON envelope per line):
    printf '%s\\n' \\
      '{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0-draft\"}' \\
      '{\"type\":\"query\",\"id\":\"q1\",\"query\":{\"goal\":\"retry policy\",\"max_frames\":3,\"max_tokens\":2000}}' \\
      '{\"type\":\"shutdown\"}' | cgp serve docs ./docs

Exit codes:
  0  success
  1  failure (the reason is printed on stderr)
  2  usage error (unknown command, missing or bad argument, a bad value such as an empty goal)
  (`cgp context` also exits 3 when no frame matched the goal; see `cgp context --help`)

Every --json output carries \"format_version\" (an integer, bumped when a field changes
meaning or disappears; new fields may appear within a version).

Environment:
  NO_COLOR        when set and not empty, never colour messages (unless --color always)
  CLICOLOR_FORCE  when set and not 0, colour messages even when stderr is not a terminal
  COLUMNS         the width progress bars and tables on stderr fit (default: the terminal's)";

/// The Context Graph Protocol command line: context for a goal, providers, consent, inspection.
///
/// Data goes to stdout and errors to stderr, so `cgp` composes with pipes.
#[derive(Debug, Parser)]
#[command(
    name = "cgp",
    about = "The Context Graph Protocol (CGP) command line: context for a goal, serving providers",
    after_help = AFTER_HELP,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Cli {
    /// When to colour messages on stderr.
    #[arg(long, value_enum, global = true, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// No progress, notes or hints on stderr; warnings, errors and data are unchanged.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The best context for a goal from a workspace, under a budget, as one
    /// fenced, cited prompt block on stdout.
    Context(ContextArgs),
    /// Serve a built-in provider: over stdio for a host to spawn, or over HTTP with `--http`.
    Serve(ServeArgs),
    /// Check a provider against the conformance suite and report each rule.
    Inspect(InspectArgs),
    /// Handshake every configured provider and show what each declares and whether it is healthy.
    Providers(ProvidersArgs),
    /// List, grant and revoke consent for providers that send data off this machine.
    Consent(ConsentArgs),
    /// Print the merged configuration (cgp.toml in the workspace, then the per-user file).
    Config(ConfigArgs),
    /// Serve CGP context to MCP clients over stdio (tools `get_context` and `list_providers`).
    Mcp(McpArgs),
    /// Expose something else as a CGP provider (today: an MCP server's resources).
    Bridge(BridgeArgs),
    /// Let a workspace cgp.toml run its programs and reach the network (after you have read it).
    Trust(TrustArgs),
    /// Write a new provider project (Rust, Python or TypeScript) that passes `cgp inspect --strict` out of the box.
    New(NewArgs),
    /// List or clear the workspace index cache (where it lives, its size per workspace).
    Cache(CacheArgs),
    /// Build an index artifact once (in CI, at a commit) for read-only replicas, or verify one.
    Index(IndexArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(CompletionsArgs),
    /// Print the manual page (roff, for `man`) on stdout, or write one per command to a directory.
    Man(ManArgs),
}

/// The text of `cgp --version`: the crate version, the commit it was built
/// from (see build.rs: `unknown` when built outside a git checkout, e.g.
/// from a crate tarball) and the protocol version it speaks.
pub fn version_text() -> String {
    format!(
        "{} (commit {}, protocol {})",
        env!("CARGO_PKG_VERSION"),
        env!("CGP_BUILD_COMMIT"),
        contextgraph_types::PROTOCOL_VERSION
    )
}

/// The whole command definition, with the version text (which clap's
/// derive cannot compute at compile time); for parsing, completions and
/// the manual page alike.
pub fn command() -> clap::Command {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let version: &'static str = VERSION.get_or_init(version_text).as_str();
    Cli::command().version(version)
}

/// Parse the process arguments. On `--help`/`--version` the text is printed
/// to stdout and `Err(0)` returned; on a usage error the message goes to
/// stderr and `Err(2)`.
pub fn parse(args: Vec<std::ffi::OsString>, color: ColorMode) -> Result<Cli, ExitCode> {
    command()
        .color(color.clap_choice())
        .try_get_matches_from(args)
        .and_then(|matches| Cli::from_arg_matches(&matches))
        .map_err(|error| {
            // Printing fails only when the stream is closed; there is no one
            // left to tell, so the exit code is all that remains.
            let _ = error.print();
            ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(crate::output::EXIT_USAGE))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn the_version_names_the_commit_and_the_protocol() {
        let v = version_text();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        assert!(v.contains(contextgraph_types::PROTOCOL_VERSION), "{v}");
        assert!(v.contains("(commit "), "{v}");
    }
}
