//! Every provider the project ships is green under `--strict`: the real
//! `cgp inspect stdio --strict` binary against `cgp serve docs` on a folder
//! of Markdown. (The docs provider's own binary is run through the same
//! suite, strict, by its crate's tests, `tests/it/suite_strict.rs`, where
//! cargo gives that binary's path.)

use crate::common::inspect;

use contextgraph_conformance::{Report, Status, Verdict};

fn assert_green(args: &[&std::ffi::OsStr]) {
    let out = inspect::cgp(args);
    let stdout = inspect::text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{}",
        inspect::text(&out.stderr)
    );
    let report: Report = serde_json::from_str(&stdout).expect("--json prints only the JSON report");
    assert_eq!(report.verdict, Verdict::Pass);
    assert!(report.strict);
    assert!(
        report.checks.iter().all(|c| c.status == Status::Pass),
        "{stdout}"
    );
    assert!(report.checks.len() >= 15, "{stdout}");
    assert!(out.stderr.is_empty(), "{}", inspect::text(&out.stderr));
}

#[test]
fn cgp_serve_docs_is_green_under_strict() {
    let folder = inspect::markdown_folder();
    let cgp = std::path::Path::new(env!("CARGO_BIN_EXE_cgp"));
    let args = [
        "inspect".as_ref(),
        "stdio".as_ref(),
        "--strict".as_ref(),
        "--json".as_ref(),
        "--".as_ref(),
        cgp.as_os_str(),
        "serve".as_ref(),
        "docs".as_ref(),
        folder.path().as_os_str(),
    ];
    assert_green(&args);
}
