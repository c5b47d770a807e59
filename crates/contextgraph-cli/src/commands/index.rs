//! `cgp index build DIR --out ARTIFACT` and `cgp index verify ARTIFACT [DIR]`:
//! build an index once (in CI, at a commit) and check it before replicas
//! serve it (`cgp serve workspace DIR --index ARTIFACT --read-only`).
//! See `contextgraph_search::artifact` for the format.

use std::io::Write as _;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use contextgraph_provider_workspace::artifact::verify_artifact;
use contextgraph_provider_workspace::serve::ServeArgs;
use contextgraph_provider_workspace::WorkspaceProvider;

use crate::commands::CommandError;
use crate::terminal::{for_terminal, path_for_terminal};

/// Arguments of `cgp index`.
#[derive(Debug, Args)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub struct IndexArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: IndexAction,
}

/// The `cgp index` actions.
#[derive(Debug, Subcommand)]
pub enum IndexAction {
    /// Index a checkout and write its index, vectors and commit as one
    /// relocatable, checksummed artifact file.
    #[command(after_help = "Examples:
  In CI, at the commit replicas will serve:
    cgp index build . --out contextgraph.cgpidx
    cgp index verify contextgraph.cgpidx .")]
    Build(BuildArgs),
    /// Check an artifact (format, checksums) and, with DIR, that DIR is at
    /// the artifact's commit. Exit 1 when it must not be served.
    Verify(VerifyArgs),
}

/// Arguments of `cgp index build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The checkout to index (and the cache options, as `cgp serve workspace`).
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Where to write the artifact.
    #[arg(long, value_name = "ARTIFACT")]
    pub out: PathBuf,
}

/// Arguments of `cgp index verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The artifact.
    #[arg(value_name = "ARTIFACT")]
    pub artifact: PathBuf,
    /// A checkout that must be at the artifact's commit.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Run `cgp index …`.
pub fn run(args: IndexArgs) -> Result<(), CommandError> {
    match args.action {
        IndexAction::Build(b) => build(b),
        IndexAction::Verify(v) => verify(v),
    }
}

fn build(args: BuildArgs) -> Result<(), CommandError> {
    let (provider, _) = WorkspaceProvider::open(&args.serve.dir, args.serve.options()?)?;
    // A loaded cache is caught up with the files first: the artifact
    // describes the checkout as it is.
    provider.refresh()?;
    let summary = provider
        .workspace()
        .write_artifact(&args.out, &format!("cgp {}", env!("CARGO_PKG_VERSION")))?;
    let m = &summary.manifest;
    let _ = writeln!(
        std::io::stdout(),
        "wrote {} ({} bytes): artifact {}, {}, {} files, {} chunks{}",
        path_for_terminal(&args.out),
        summary.bytes,
        summary.id,
        // The branch name comes from the checkout's `.git/HEAD`.
        for_terminal(&m.commit.to_string()),
        m.files,
        m.chunks,
        if m.model.is_some() {
            ", with vectors"
        } else {
            ""
        }
    );
    Ok(())
}

fn verify(args: VerifyArgs) -> Result<(), CommandError> {
    let file = verify_artifact(&args.artifact, args.dir.as_deref())?;
    let m = &file.manifest;
    let _ = writeln!(
        std::io::stdout(),
        "{}: ok: artifact {}, {}, {} files, {} chunks, written by {}{}",
        path_for_terminal(&args.artifact),
        file.id_hex(),
        // The manifest is the artifact file's text, not ours.
        for_terminal(&m.commit.to_string()),
        m.files,
        m.chunks,
        for_terminal(&m.created_by),
        match &args.dir {
            Some(d) => format!("; {} is at that commit", path_for_terminal(d)),
            None => String::new(),
        }
    );
    Ok(())
}
