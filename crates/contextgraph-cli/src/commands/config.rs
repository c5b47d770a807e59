//! `cgp config`: print the merged configuration and where each value came
//! from. Also home of what every configured command shares: choosing the
//! configuration (`--dir`, `--config`) and the async runtime.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use contextgraph_config::{Config, Environment};

use super::CommandError;
use crate::output;
use crate::terminal;

/// How a command finds its configuration (flattened into each command).
#[derive(Debug, Clone, Args)]
pub struct ConfigSelection {
    /// The workspace: where cgp.toml is looked for (walking up to the repository root).
    #[arg(long, value_name = "DIR", default_value = ".", value_parser = crate::validate::existing_dir)]
    pub dir: PathBuf,
    /// Use exactly this configuration file instead of looking for cgp.toml
    /// (the per-user file is not read either).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

impl ConfigSelection {
    /// Load the merged configuration, and say on stderr what of it was
    /// set aside (an untrusted workspace file's providers, a file another
    /// user owns), once per command.
    pub fn load(&self) -> Result<Config, CommandError> {
        let config = Config::load_with(
            &self.dir,
            self.config.as_deref(),
            &Environment::from_process(),
        )?;
        let mut stderr = std::io::stderr().lock();
        for w in &config.warnings {
            let _ = writeln!(
                stderr,
                "warning: {}",
                terminal::for_terminal(&w.to_string())
            );
        }
        Ok(config)
    }

    /// The arguments that select this same configuration again, for the
    /// commands cgp suggests (`cgp consent grant … --dir … --config …`).
    pub fn repeat_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if self.dir != std::path::Path::new(".") {
            args.push("--dir".to_owned());
            args.push(self.dir.display().to_string());
        }
        if let Some(c) = &self.config {
            args.push("--config".to_owned());
            args.push(c.display().to_string());
        }
        args
    }
}

/// A runtime for the engine (the CLI is synchronous at the top).
pub fn runtime() -> Result<tokio::runtime::Runtime, CommandError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}").into())
}

/// Arguments of `cgp config`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  cgp config                       # the merged configuration, as commented TOML
  cgp config --json | jq '.providers[].name'
  cgp config --config ./ci/cgp.toml

Where cgp.toml is found (later wins, key by key; providers by name):
  1. the per-user file: $CGP_CONFIG, else $XDG_CONFIG_HOME/cgp/cgp.toml, else ~/.config/cgp/cgp.toml
  2. the workspace file: the first cgp.toml walking up from --dir to the repository root
  --config PATH replaces both. With no file, the built-in workspace provider is used.

Tokens are never printed: an HTTP provider shows only token_env = \"VAR\" or token_file = \"path\".

Exit codes:
  0  the configuration was printed
  1  a configuration file is wrong (the error names file, line, column and key)
  2  usage error")]
pub struct ConfigArgs {
    /// Where to look for the configuration.
    #[command(flatten)]
    pub selection: ConfigSelection,
    /// Print JSON (every value with its origin) instead of TOML.
    #[arg(long)]
    pub json: bool,
}

/// Run `cgp config`.
pub fn run(args: ConfigArgs) -> Result<(), CommandError> {
    let config = args.selection.load()?;
    let mut stdout = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_writer_pretty(&mut stdout, &config)
            .map_err(std::io::Error::from)
            .and_then(|()| stdout.write_all(b"\n"))
    } else {
        // N15: a workspace cgp.toml's bidi or control characters are shown
        // as TOML escapes (the same value when read back), never raw.
        stdout.write_all(terminal::toml_escaped(&config.to_toml()).as_bytes())
    };
    output::finish_stdout(written.and_then(|()| stdout.flush()))
}
