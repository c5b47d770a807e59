//! The conventions a command-line user expects, end to end through the
//! real binary: `--version` with commit and protocol, completions and a
//! manual page generated from the command definitions, `--color` and
//! `NO_COLOR`, `-q`, `format_version` in every `--json`, exit code 2 for
//! every bad argument value, and exit 3 with a hint when nothing matched.

use contextgraph_testkit::sandbox::Sandbox;
use std::process::Output;

fn sandbox() -> Sandbox {
    Sandbox::new(crate::CGP)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\nstderr: {}", stdout(out), stderr(out)))
}

#[test]
fn version_names_the_commit_it_was_built_from_and_the_protocol() {
    let out = sandbox().run(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains(contextgraph_types::PROTOCOL_VERSION),
        "{text}"
    );
    let commit = std::process::Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short=12",
            "HEAD",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    match commit {
        // Built from this checkout: its HEAD (tests run on the commit just built).
        Some(hash) => assert!(
            text.starts_with(&format!("cgp {} (commit ", env!("CARGO_PKG_VERSION")))
                && text.contains("commit ")
                && text
                    .split("commit ")
                    .nth(1)
                    .is_some_and(|rest| rest.len() >= 12
                        && rest[..12].chars().all(|c| c.is_ascii_hexdigit())),
            "{text} (HEAD is {hash})"
        ),
        None => assert!(text.contains("(commit unknown,"), "{text}"),
    }
}

#[test]
fn completions_are_generated_for_each_shell_and_a_bad_shell_is_a_usage_error() {
    let s = sandbox();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef cgp"),
        ("fish", "complete -c cgp"),
        ("elvish", "cgp"),
        ("powershell", "cgp"),
    ] {
        let out = s.run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script:.300}");
        // Generated from the definitions: every command is completed.
        for command in ["context", "cache", "providers", "mcp"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    assert_eq!(s.run(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn the_manual_page_is_roff_from_the_definitions_and_one_per_command_with_dir() {
    let s = sandbox();
    let out = s.run(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.contains(".TH cgp 1"), "{page:.300}");
    assert!(
        // roff writes a hyphen as `\-`.
        page.contains("context") && page.contains("\\-\\-color"),
        "{page:.2000}"
    );
    let dir = s.path("man1");
    std::fs::create_dir_all(&dir).unwrap();
    let out = s.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for page in ["cgp.1", "cgp-context.1", "cgp-cache.1", "cgp-cache-clear.1"] {
        assert!(dir.join(page).is_file(), "{page} written");
    }
    let missing = s.path("no-such-dir");
    let out = s.run(&["man", "--dir", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn color_follows_the_flag_and_no_color() {
    let s = sandbox();
    // A failure message (a config file that is not there) is coloured on request only.
    let fail = |extra: &[&str], no_color: bool| {
        let mut cmd = s.command(&[]);
        cmd.args(extra)
            .args(["config", "--config", "/no/such/cgp.toml"]);
        if !no_color {
            cmd.env_remove("NO_COLOR");
        }
        cmd.output().unwrap()
    };
    let coloured = fail(&["--color", "always"], true);
    assert_eq!(coloured.status.code(), Some(1), "{}", stderr(&coloured));
    assert!(
        stderr(&coloured).contains("\x1b[1;31merror:"),
        "{}",
        stderr(&coloured)
    );
    let plain = fail(&["--color=never"], false);
    assert!(!stderr(&plain).contains('\x1b'), "{}", stderr(&plain));
    // auto: not a terminal, NO_COLOR set: plain.
    let auto = fail(&[], true);
    assert!(!stderr(&auto).contains('\x1b'), "{}", stderr(&auto));
    let forced = s
        .command(&["config", "--config", "/no/such/cgp.toml"])
        .env("CLICOLOR_FORCE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        !stderr(&forced).contains('\x1b'),
        "NO_COLOR wins over CLICOLOR_FORCE"
    );
    assert_eq!(
        s.run(&["--color", "sometimes", "config"]).status.code(),
        Some(2)
    );
}

#[test]
fn quiet_silences_the_first_index_notice_and_progress_but_not_the_data() {
    let s = sandbox();
    let out = s.run(&["-q", "context", "retry backoff"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("retry_with_backoff"));
    assert!(!stderr(&out).contains("no index"), "{}", stderr(&out));
    // A second workspace, without -q: its first run says what it does.
    s.write("ws2/.git/HEAD", "ref: refs/heads/main\n");
    s.write("ws2/src/lib.rs", "pub fn retry_with_backoff() {}\n");
    let ws2 = s.path("ws2");
    let out = s.run(&["context", "retry backoff", "--dir", ws2.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("no index of") && err.contains("building it now, once"),
        "{err}"
    );
    // The second run reuses it and says nothing of the kind.
    let out = s.run(&["context", "retry backoff", "--dir", ws2.to_str().unwrap()]);
    assert!(!stderr(&out).contains("no index of"), "{}", stderr(&out));
}

#[test]
fn every_json_output_carries_its_format_version() {
    let s = sandbox();
    let docs = s.path("ws/docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("a.md"), "# Retry\n\nBack off.\n").unwrap();
    let outputs = [
        s.run(&["context", "retry backoff", "--json"]),
        s.run(&["providers", "--json"]),
        s.run(&["consent", "list", "--json"]),
        s.run(&["cache", "list", "--json"]),
        s.run(&[
            "inspect",
            "stdio",
            "--json",
            "--",
            crate::CGP,
            "serve",
            "docs",
            docs.to_str().unwrap(),
        ]),
    ];
    for out in &outputs {
        let v = json(out);
        assert_eq!(v["format_version"], 1, "{v:.300}");
    }
    let session = s.path("turns.json");
    let out = s.run(&[
        "context",
        "retry backoff",
        "--json",
        "--session",
        session.to_str().unwrap(),
    ]);
    assert_eq!(json(&out)["format_version"], 1);
}

/// Every bad value of an argument exits 2, says which argument on stderr,
/// and writes nothing to stdout.
#[test]
fn every_bad_argument_value_exits_two() {
    let s = sandbox();
    std::fs::write(s.path("ws/file.txt"), "not a directory").unwrap();
    let file = s.path("ws/file.txt");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["context", ""], "<GOAL>"),
        (vec!["context", "   "], "<GOAL>"),
        (vec!["context", "x", "--dir", "/no/such/dir"], "--dir"),
        (
            vec!["context", "x", "--dir", file.to_str().unwrap()],
            "--dir",
        ),
        (vec!["providers", "--dir", "/no/such/dir"], "--dir"),
        (
            vec!["context", "x", "--safety-factor", "0"],
            "--safety-factor",
        ),
        (
            vec!["context", "x", "--safety-factor", "0.5"],
            "--safety-factor",
        ),
        (
            vec!["context", "x", "--safety-factor", "NaN"],
            "--safety-factor",
        ),
        (vec!["context", "x", "--max-frames", "0"], "--max-frames"),
        (vec!["context", "x", "--budget", "0"], "--budget"),
        (vec!["context", "x", "--kinds", "symbols"], "--kinds"),
        (
            vec!["new", "provider", "Bad_Name", "--lang", "python"],
            "invalid provider name",
        ),
        (
            vec![
                "new",
                "provider",
                "ok-name",
                "--lang",
                "python",
                "--dir",
                "/no/such/dir",
            ],
            "--dir",
        ),
        (
            vec![
                "new",
                "provider",
                "ok-name",
                "--lang",
                "rust",
                "--sdk",
                "/no/such/dir",
            ],
            "--sdk",
        ),
        (vec!["cache", "clear"], "say what to clear"),
        (vec!["man", "--dir", "/no/such/dir"], "--dir"),
    ];
    for (args, names) in cases {
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(2), "cgp {args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(names),
            "cgp {args:?}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "cgp {args:?} wrote to stdout");
    }
}

#[test]
fn a_goal_that_matches_nothing_exits_three_with_a_hint_and_still_writes_the_json() {
    let s = sandbox();
    let out = s.run(&["context", "zzqxv flurbnog"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("nothing matched \"zzqxv flurbnog\""), "{err}");
    assert!(err.contains("hint:") && err.contains("--anchor"), "{err}");
    assert!(!err.contains("error:"), "not reported as a failure: {err}");
    let out = s.run(&["context", "zzqxv flurbnog", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let v = json(&out);
    assert_eq!(
        v["audit"]["frames"].as_array().map(Vec::len),
        Some(0),
        "{v}"
    );
    assert_eq!(v["format_version"], 1);
    // With --kinds, the hint says to drop them.
    let out = s.run(&["context", "zzqxv flurbnog", "--kinds", "doc"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("drop --kinds"), "{}", stderr(&out));
}
