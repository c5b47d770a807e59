//! One module per command; [`run`] dispatches.
//!
//! A command returns `Ok(())` or an error whose message a person can act on
//! (it names the provider or input, the rule broken and what to do next);
//! `main` prints it and exits 1.

pub mod bridge;
pub mod bridge_startup;
pub mod cache;
pub mod completions;
pub mod config;
pub mod consent;
pub mod consent_prompt;
pub mod context;
pub mod files;
pub mod first_index;
pub mod index;
pub mod inspect;
pub mod mcp;
pub mod new;
mod new_templates;
pub mod providers;
pub mod serve;
pub mod session_file;
pub mod trust;

use crate::cli::Command;

/// What a command returns on failure.
pub type CommandError = Box<dyn std::error::Error + Send + Sync>;

/// A bad argument value found after parsing (a scope, an expiry, a
/// token): `cgp` exits 2 for it, as `--help` promises for usage errors.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// `cgp context` found no frame for the goal: the hint is already on
/// stderr, and `cgp` exits 3 (`output::EXIT_NO_MATCH`).
#[derive(Debug)]
pub struct NoMatch;

impl std::fmt::Display for NoMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no frame matched the goal")
    }
}

impl std::error::Error for NoMatch {}

/// Run one command.
pub fn run(command: Command) -> Result<(), CommandError> {
    match command {
        Command::Context(args) => context::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Providers(args) => providers::run(args),
        Command::Consent(args) => consent::run(args),
        Command::Config(args) => config::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Bridge(args) => bridge::run(args),
        Command::Trust(args) => trust::run(args),
        Command::New(args) => new::run(args),
        Command::Cache(args) => cache::run(args),
        Command::Index(args) => index::run(args),
        Command::Completions(args) => completions::run_completions(args),
        Command::Man(args) => completions::run_man(args),
    }
}
