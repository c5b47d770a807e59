//! `cgp completions <shell>` and `cgp man`: a shell completion script and
//! the manual pages, both generated from the same clap definitions that
//! parse the command line, so they can never disagree with it.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::CommandError;
use crate::output;

/// Arguments of `cgp completions`.
#[derive(Debug, Args)]
#[command(after_help = "\
Install (then open a new shell):
  bash:  cgp completions bash > ~/.local/share/bash-completion/completions/cgp
  zsh:   cgp completions zsh > ~/.zfunc/_cgp      # with fpath+=~/.zfunc before compinit in ~/.zshrc
  fish:  cgp completions fish > ~/.config/fish/completions/cgp.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `cgp man`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  cgp man | man -l -                      # read it now
  cgp man --dir ~/.local/share/man/man1   # install cgp.1, cgp-context.1, … (then `man cgp`)")]
pub struct ManArgs {
    /// Write one page per command (cgp.1, cgp-context.1, …) into this existing
    /// directory instead of printing the top-level page on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Run `cgp completions`.
pub fn run_completions(args: CompletionsArgs) -> Result<(), CommandError> {
    let mut command = crate::cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "cgp", &mut script);
    let mut stdout = std::io::stdout().lock();
    output::finish_stdout(stdout.write_all(&script).and_then(|()| stdout.flush()))
}

/// Run `cgp man`.
pub fn run_man(args: ManArgs) -> Result<(), CommandError> {
    let command = crate::cli::command();
    if let Some(dir) = args.dir {
        if !dir.is_dir() {
            return Err(Box::new(super::UsageError(format!(
                "--dir {}: not a directory; create it first (e.g. mkdir -p {})",
                crate::terminal::path_for_terminal(&dir),
                crate::terminal::path_for_terminal(&dir)
            ))));
        }
        return clap_mangen::generate_to(command, &dir).map_err(|e| {
            format!(
                "cannot write the manual pages into {}: {e}",
                crate::terminal::path_for_terminal(&dir)
            )
            .into()
        });
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .map_err(|e| format!("cannot render the manual page: {e}"))?;
    let mut stdout = std::io::stdout().lock();
    output::finish_stdout(stdout.write_all(&page).and_then(|()| stdout.flush()))
}
