//! The whole program behind the binary: set up the corpus (and its scratch
//! folder), serve stdin/stdout, and end the way the mode says.
//!
//! It is a library function so that a host's or a conformance suite's test
//! binary can re-run itself as this provider (`run(&options)` in a child
//! process) instead of locating the binary on disk.

use std::path::PathBuf;
use std::sync::Arc;

use crate::corpus::Corpus;
use crate::engine::Engine;
use crate::lifecycle::Lifecycle;
use crate::options::{Options, BIN_NAME};
use crate::serve::{serve, Outcome, EXIT_FAILURE};

/// Run the provider on this process's stdin/stdout; returns the exit code.
///
/// Does not return in `hang-on-shutdown` mode once input ends (the process
/// waits to be killed), nor when a crash mode crashes or stdout fails (the
/// process exits from inside). The built-in corpus's scratch folder is
/// deleted on every one of those paths, except a kill.
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
        None => {
            let scratch = match tempfile::Builder::new()
                .prefix("contextgraph-misbehaving-")
                .tempdir()
            {
                Ok(dir) => dir,
                Err(e) => {
                    eprintln!("{name}: cannot create a temporary folder for the built-in corpus: {e}; check that TMPDIR is writable, or pass --dir");
                    return EXIT_FAILURE;
                }
            };
            match Corpus::builtin(scratch.path()) {
                Ok(corpus) => (corpus, Some(scratch)),
                Err(e) => {
                    eprintln!("{name}: {e}");
                    return EXIT_FAILURE;
                }
            }
        }
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
