//! `cgp serve docs <DIR> [--http ADDR …]`.

use std::path::PathBuf;

use clap::Args;
use contextgraph_provider_docs::{serve_dir, DocsConfig, DocsProvider, DEFAULT_MAX_FILE_BYTES};

use super::http::{serve_http, HttpFlags};
use crate::commands::CommandError;

/// Arguments of `cgp serve docs`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  Over stdio, for a host that spawns this command:
    cgp serve docs ./docs
  Over HTTP until Ctrl-C/SIGTERM (stderr says `cgp serve: listening on <URL>`):
    cgp serve docs ./docs --http 127.0.0.1:8700
    cgp inspect http http://127.0.0.1:8700/cgp --strict
  On the network: TLS and a token (read from a variable, never typed here):
    CGP_TOKEN=$(openssl rand -hex 32) cgp serve docs ./docs --http 0.0.0.0:8700 \\
      --token-env CGP_TOKEN --tls-cert cert.pem --tls-key key.pem")]
pub struct DocsArgs {
    /// The folder to serve, recursively (hidden entries, target/ and
    /// node_modules/ are skipped; symlinks never lead out of it).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Skip documents larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: u64,

    /// HTTP serving (stdio without `--http`).
    #[command(flatten)]
    pub http: HttpFlags,
}

/// Serve the folder over stdio, or over HTTP with `--http`.
pub fn run(args: DocsArgs) -> Result<(), CommandError> {
    let config = DocsConfig::new(args.dir).with_max_file_bytes(args.max_file_bytes);
    match &args.http.http {
        None => serve_dir(config)?,
        Some(addr) => serve_http(DocsProvider::open(config)?, addr, &args.http)?,
    }
    Ok(())
}
