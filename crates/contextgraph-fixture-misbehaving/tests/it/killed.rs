//! However the provider ends, its built-in corpus leaves nothing behind:
//! on Linux the corpus files are unnamed (no folder exists even while it
//! runs), so SIGTERM, SIGINT and SIGKILL, which run none of its clean-up
//! code, leave nothing either. Each test gives the provider a `TMPDIR` of
//! its own and checks it stays empty, and that the files the frames named
//! are unreadable once the process is gone.

use std::path::PathBuf;

use crate::common;

use common::{corpus_files, frames_of, roomy_query, vanish, Provider, EXIT_DEADLINE};

/// A serving provider, the corpus files its answer names (readable now),
/// and a check that nothing of it is in its temporary folder.
fn serving(mode: &str) -> (Provider, Vec<PathBuf>) {
    let mut p = Provider::mode(mode, &[]);
    p.handshake();
    let files = corpus_files(&frames_of(&p.query("q", &roomy_query()), "q"));
    for f in &files {
        assert!(
            std::fs::read(f).is_ok_and(|b| !b.is_empty()),
            "{} is readable while serving",
            f.display()
        );
    }
    assert_eq!(
        p.temp_entries(),
        Vec::<PathBuf>::new(),
        "no folder and no named file, even while serving"
    );
    (p, files)
}

fn assert_nothing_left(p: &Provider, files: &[PathBuf]) {
    assert!(vanish(files, EXIT_DEADLINE), "{files:?} left behind");
    assert_eq!(p.temp_entries(), Vec::<PathBuf>::new());
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_leaves_nothing_behind() {
    let (mut p, files) = serving("normal");
    p.signal("TERM");
    assert!(p.wait_exit(EXIT_DEADLINE).is_some(), "SIGTERM ends it");
    assert_nothing_left(&p, &files);
}

#[cfg(target_os = "linux")]
#[test]
fn sigint_leaves_nothing_behind() {
    let (mut p, files) = serving("normal");
    p.signal("INT");
    assert!(p.wait_exit(EXIT_DEADLINE).is_some(), "SIGINT ends it");
    assert_nothing_left(&p, &files);
}

#[cfg(target_os = "linux")]
#[test]
fn sigkill_leaves_nothing_behind_even_when_it_would_never_exit() {
    let (mut p, files) = serving("hang-on-shutdown");
    p.kill();
    assert_nothing_left(&p, &files);
}
