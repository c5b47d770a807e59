//! Bash: both function forms (`f() { … }`, `function f { … }`), guarded
//! definitions inside `if`, the comment above a function; commands that
//! run a script's functions are calls (builtins are not); `source` and `.`
//! of a literal path are imports resolved beside the script.

use super::{assert_symbol, chunks, Indexed};

const DEPLOY: &str = include_str!("fixtures/bash/scripts/deploy.sh");
const LOG: &str = include_str!("fixtures/bash/scripts/lib/log.sh");

const PATH: &str = "scripts/deploy.sh";

#[test]
fn bash_functions_have_their_names_and_lines() {
    let c = chunks(PATH, DEPLOY);
    assert_symbol(&c, "usage", "usage", "function", (11, 17));
    assert_symbol(&c, "build_release", "build_release", "function", (19, 24));
    assert_symbol(&c, "upload_release", "upload_release", "function", (26, 32));
    // Defined inside an `if`.
    assert_symbol(&c, "deploy_hosts", "deploy_hosts", "function", (42, 44));
    assert_symbol(&c, "main", "main", "function", (47, 62));
}

#[test]
fn bash_definitions_calls_and_sources_resolve() {
    let ix = Indexed::new(&[(PATH, DEPLOY), ("scripts/lib/log.sh", LOG)]);
    assert_eq!(ix.defined("log_info"), ["scripts/lib/log.sh#log_info"]);
    assert_eq!(
        ix.call(PATH, "build_release", "log_info").as_deref(),
        Some("scripts/lib/log.sh#log_info")
    );
    assert_eq!(
        ix.call(PATH, "main", "switch_current").as_deref(),
        Some("scripts/deploy.sh#switch_current")
    );
    assert_eq!(
        ix.import(PATH, "./lib/log.sh").as_deref(),
        Some("scripts/lib/log.sh")
    );
}

#[test]
fn builtins_are_no_calls() {
    let c = chunks(PATH, DEPLOY);
    let main = assert_symbol(&c, "main", "main", "function", (47, 62));
    assert!(
        main.calls.iter().any(|n| n == "build_release"),
        "{:?}",
        main.calls
    );
    assert!(
        !main.calls.iter().any(|n| n == "local" || n == "shift"),
        "{:?}",
        main.calls
    );
}
