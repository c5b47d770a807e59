//! A stdio provider configured with relative `args`, started from a
//! subdirectory of its repository: it runs in the directory of the cgp.toml
//! that names it, and when it fails to start, the failure is said in plain
//! words with its stderr as lines (issue 25, item 6).

use std::process::Command;

use crate::CGP;

#[test]
fn relative_args_resolve_from_the_cgp_toml_and_a_failed_start_shows_stderr_as_lines() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("deep/sub")).unwrap();
    std::fs::write(repo.join("deep/sub/main.rs"), "fn main() {}\n").unwrap();
    // Found only from the repository root: it fails on purpose, after
    // saying where it runs.
    std::fs::write(
        repo.join("provider.py"),
        "import os, sys\nsys.stderr.write('running in ' + os.getcwd() + '\\n')\nsys.stderr.write('ImportError: no module named cgp_sdk\\n')\nsys.exit(3)\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("cgp.toml"),
        "[providers.notes]\ncommand = \"python3\"\nargs = [\"provider.py\"]\n",
    )
    .unwrap();
    let cgp = |args: &[&str], cwd: &std::path::Path| {
        Command::new(CGP)
            .args(args)
            .current_dir(cwd)
            .env("HOME", dir.path().join("home"))
            .env("XDG_CONFIG_HOME", dir.path().join("home/.config"))
            .env("XDG_DATA_HOME", dir.path().join("home/.local/share"))
            .env("CONTEXTGRAPH_WORKSPACE_CACHE", dir.path().join("cache"))
            .env_remove("CGP_CONFIG")
            .output()
            .unwrap()
    };
    let trusted = cgp(&["trust", repo.join("cgp.toml").to_str().unwrap()], &repo);
    assert!(trusted.status.success(), "{trusted:?}");
    let out = cgp(
        &["context", "main function", "--no-input"],
        &repo.join("deep/sub"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let canonical = std::fs::canonicalize(&repo).unwrap();
    // It ran, in the repository root (provider.py was found, so it got to
    // write its own lines), and said so line by line.
    assert!(
        stderr.contains(&format!("    running in {}", canonical.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("\n    ImportError: no module named cgp_sdk"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`python3 provider.py` (in ")
            && stderr.contains("exited before it answered the CGP handshake"),
        "{stderr}"
    );
    assert!(!stderr.contains("\\u{a}"), "{stderr}");
    assert!(
        !stderr.contains("H1"),
        "plain words, not a protocol error: {stderr}"
    );
}

#[test]
fn a_command_with_a_space_is_a_configuration_error_suggesting_args() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::write(
        dir.path().join("cgp.toml"),
        "[providers.notes]\ncommand = \"python3 provider.py\"\n",
    )
    .unwrap();
    let out = Command::new(CGP)
        .args(["config", "--dir"])
        .arg(dir.path())
        .env("HOME", dir.path().join("home"))
        .env("XDG_CONFIG_HOME", dir.path().join("home/.config"))
        .env_remove("CGP_CONFIG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cgp.toml:2:11: key `providers.notes.command`")
            && stderr.contains("arguments go in `args`"),
        "{stderr}"
    );
}
