//! The command line: `--help` lists every mode with its rule, bad
//! arguments are usage errors (exit 2) that say what to fix.

use std::process::Command;

use contextgraph_fixture_misbehaving::Mode;

const BIN: &str = env!("CARGO_BIN_EXE_contextgraph-misbehaving-provider");

#[test]
fn help_lists_every_mode_with_its_rule_and_description() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for mode in Mode::ALL {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(mode.name()))
            .unwrap_or_else(|| panic!("--help does not list {mode}"));
        assert!(line.contains(mode.description()), "{line}");
        assert!(line.contains(&format!("[{}]", mode.rule())), "{line}");
    }
    for flag in ["--mode", "--dir", "--delay-ms", "--name", "--version"] {
        assert!(text.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn list_modes_prints_one_name_per_line() {
    let out = Command::new(BIN).arg("--list-modes").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = text.lines().collect();
    let expected: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(names, expected);
}

#[test]
fn an_unknown_mode_is_a_usage_error_naming_it() {
    let out = Command::new(BIN)
        .args(["--mode", "lying"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("\"lying\"") && err.contains("lying-cost"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "stdout carries protocol messages only"
    );
}

#[test]
fn binary_path_finds_the_built_binary_from_a_test() {
    let found = contextgraph_fixture_misbehaving::binary_path().expect("found next to the test");
    assert_eq!(
        std::fs::canonicalize(found).unwrap(),
        std::fs::canonicalize(BIN).unwrap()
    );
}
