//! The whole program behind the binary: set up the corpus (and its scratch
//! folder), serve stdin/stdout, and end the way the mode says.
//!
//! It is a library function so that a host's or a conformance suite's test
//! binary can re-run itself as this provider (`run(&options)` in a child
//! process) instead of locating the binary on disk.

use std::path::PathBuf;
use std::sync::Arc;

use tempfile::TempDir;

use crate::corpus::Corpus;
use crate::engine::Engine;
use crate::lifecycle::Lifecycle;
use crate::options::{Options, BIN_NAME};
use crate::serve::{serve, Outcome, EXIT_FAILURE};

/// Run the provider on this process's stdin/stdout; returns the exit code.
///
/// Does not return in `hang-on-shutdown` mode once input ends (the process
/// waits to be killed), nor when a crash mode crashes or stdout fails (the
/// process exits from inside). The built-in corpus leaves nothing behind on
/// any of those paths, nor, on Linux, when the process is killed, SIGKILL
/// included (elsewhere a kill leaves its scratch folder behind).
pub fn run(options: &Options) -> i32 {
    let name = &options.name;
    let (corpus, scratch) = match &options.dir {
        Some(dir) => match Corpus::from_dir(dir) {
            Ok(corpus) => (corpus, None),
            Err(e) => {
                eprintln!("{name}: {e}");
                return EXIT_FAILURE;
            }
        },
        None => match builtin_corpus() {
            Ok(pair) => pair,
            Err(message) => {
                eprintln!("{name}: {message}");
                return EXIT_FAILURE;
            }
        },
    };
    let mode = options.mode;
    eprintln!(
        "{name}: mode {mode} [{}]: {}; serving {}",
        mode.rule(),
        mode.description(),
        corpus.root().display()
    );
    let lifecycle = Arc::new(Lifecycle::new(name, scratch));
    let engine = Arc::new(Engine::new(mode, corpus, name, &options.version));
    let outcome = serve(
        std::io::stdin().lock(),
        std::io::stdout(),
        engine,
        options.delay,
        Arc::clone(&lifecycle),
    );
    lifecycle.remove_scratch();
    match outcome {
        Outcome::Exit(code) => code,
        Outcome::Hang => {
            eprintln!("{name}: hang-on-shutdown: input ended; staying alive until killed");
            loop {
                std::thread::park();
            }
        }
    }
}

/// The built-in corpus and the scratch folder it needs, if any. On Linux
/// its files are unnamed (no folder at all: nothing to delete, nothing left
/// behind by a kill, SIGKILL included); elsewhere they go into a scratch
/// folder, deleted on every way out except a kill.
#[cfg(target_os = "linux")]
fn builtin_corpus() -> Result<(Corpus, Option<TempDir>), String> {
    Corpus::builtin_unnamed()
        .map(|corpus| (corpus, None))
        .map_err(|e| e.to_string())
}

/// See the Linux version: a scratch folder where unnamed files cannot be
/// reached by path.
#[cfg(not(target_os = "linux"))]
fn builtin_corpus() -> Result<(Corpus, Option<TempDir>), String> {
    let scratch = tempfile::Builder::new()
        .prefix("contextgraph-misbehaving-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder for the built-in corpus: {e}; check that TMPDIR is writable, or pass --dir"))?;
    let corpus = Corpus::builtin(scratch.path()).map_err(|e| e.to_string())?;
    Ok((corpus, Some(scratch)))
}

/// Environment variable naming the binary explicitly, checked first by
/// [`binary_path`].
pub const BINARY_ENV: &str = "CONTEXTGRAPH_MISBEHAVING_PROVIDER";

/// Where the `contextgraph-misbehaving-provider` binary is, for another
/// crate's tests: `$CONTEXTGRAPH_MISBEHAVING_PROVIDER` when set, else next to
/// the running executable or one folder up (a test binary runs from
/// `target/<profile>/deps/`, the binary sits in `target/<profile>/`).
///
/// Cargo builds a dependency's binaries only for its own tests, so build it
/// first (`cargo build -p contextgraph-fixture-misbehaving`); `None` means
/// it was not found.
pub fn binary_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(BINARY_ENV) {
        return Some(PathBuf::from(path));
    }
    let exe = std::env::current_exe().ok()?;
    let file = format!("{BIN_NAME}{}", std::env::consts::EXE_SUFFIX);
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(&file))
        .find(|candidate| candidate.is_file())
}
