//! Answers come from the files as they are now (issue 13, freshness): an
//! edit, an added file, a deletion and a rename between two `cgp context`
//! runs, and during one `cgp mcp` session, are reflected by the next
//! answer; and indexing progress on a non-terminal stderr is one line when
//! a long index starts and one when it ends, nothing for a short run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::json;

/// A workspace and isolated home, data and index-cache directories.
struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let s = Sandbox {
            root: tempfile::tempdir().expect("temp dir"),
        };
        s.write("ws/.git/HEAD", "ref: refs/heads/main\n");
        s
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    fn ws(&self) -> PathBuf {
        self.path("ws")
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn env(&self, cmd: &mut Command) {
        cmd.env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("home/.config"))
            .env("XDG_DATA_HOME", self.path("home/.local/share"))
            .env("CGP_DATA_DIR", self.path("data"))
            .env("CONTEXTGRAPH_WORKSPACE_CACHE", self.path("cache"))
            .env("NO_COLOR", "1")
            .env_remove("CGP_CONFIG")
            .env_remove("CLICOLOR_FORCE");
    }

    /// `cgp context GOAL` in the workspace; stdout and stderr are pipes.
    fn context(&self, goal: &str) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cgp"));
        cmd.args(["context", goal, "--no-input"])
            .current_dir(self.ws());
        self.env(&mut cmd);
        let out = cmd.output().expect("cgp runs");
        assert!(
            out.status.success(),
            "cgp context failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn prompt(&self, goal: &str) -> String {
        String::from_utf8_lossy(&self.context(goal).stdout).into_owned()
    }
}

fn fn_file(name: &str) -> String {
    format!("/// The {name} step of the ocelot pipeline.\npub fn {name}() -> u32 {{\n    7\n}}\n")
}

#[test]
fn context_runs_reflect_an_edit_an_addition_a_deletion_and_a_rename() {
    let s = Sandbox::new();
    s.write("ws/src/first.rs", &fn_file("ocelot_alpha"));
    let p = s.prompt("ocelot pipeline step");
    assert!(p.contains("ocelot_alpha"), "{p}");

    // Edit (a longer name, so size and content both change).
    s.write("ws/src/first.rs", &fn_file("ocelot_alphabet"));
    let p = s.prompt("ocelot pipeline step");
    assert!(p.contains("ocelot_alphabet"), "the edit is served: {p}");
    assert!(!p.contains("ocelot_alpha()"), "the old text is gone: {p}");

    // Addition.
    s.write("ws/src/second.rs", &fn_file("ocelot_gamma"));
    let p = s.prompt("ocelot pipeline step");
    assert!(p.contains("ocelot_gamma"), "the new file is found: {p}");

    // Deletion.
    std::fs::remove_file(s.path("ws/src/second.rs")).expect("delete");
    let p = s.prompt("ocelot pipeline step");
    assert!(!p.contains("ocelot_gamma"), "the deleted file is gone: {p}");

    // Rename.
    std::fs::rename(s.path("ws/src/first.rs"), s.path("ws/src/renamed.rs")).expect("rename");
    let p = s.prompt("ocelot pipeline step");
    assert!(p.contains("src/renamed.rs"), "the new path is cited: {p}");
    assert!(!p.contains("src/first.rs"), "the old path is not: {p}");
}

#[test]
fn a_long_index_on_a_non_terminal_stderr_prints_one_start_and_one_end_line() {
    let s = Sandbox::new();
    let files = contextgraph_provider_workspace::progress::LONG_RUN_FILES + 20;
    for i in 0..files {
        s.write(&format!("ws/src/m{i}.rs"), &format!("pub fn f{i}() {{}}\n"));
    }
    let out = s.context("f7 function");
    let err = String::from_utf8_lossy(&out.stderr);
    let start = format!("indexing {files} files");
    let end = format!("indexed {files} files in ");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.iter().filter(|l| l.contains(&start)).count(),
        1,
        "one start line: {err}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.contains(&end)).count(),
        1,
        "one end line: {err}"
    );
    let ends_with_seconds = lines
        .iter()
        .find(|l| l.contains(&end))
        .is_some_and(|l| l.ends_with(" s"));
    assert!(ends_with_seconds, "{err}");
    assert!(
        !err.contains('\r'),
        "no redrawn bar off a terminal: {err:?}"
    );

    // Unchanged since: the next run re-indexes nothing and says nothing.
    let again = s.context("f7 function");
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(!err.contains("indexing"), "{err}");
}

#[test]
fn a_short_index_on_a_non_terminal_stderr_prints_nothing_about_indexing() {
    let s = Sandbox::new();
    s.write("ws/src/first.rs", &fn_file("ocelot_alpha"));
    let out = s.context("ocelot pipeline step");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("indexing") && !err.contains("indexed"),
        "{err}"
    );
}

async fn mcp(s: &Sandbox) -> RunningService<RoleClient, ()> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cgp"));
    cmd.arg("mcp").arg("--dir").arg(s.ws());
    s.env(&mut cmd);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let transport = TokioChildProcess::new(cmd).expect("cgp mcp spawns");
    ().serve(transport).await.expect("cgp mcp initializes")
}

async fn ask(client: &RunningService<RoleClient, ()>, goal: &str) -> String {
    // A session of its own per call: each answer is complete (the MCP
    // session would otherwise list unchanged evidence by label only).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let params = CallToolRequestParams::new("get_context".to_owned()).with_arguments(
        json!({"goal": goal, "budget": 4000, "session": format!("call-{n}")})
            .as_object()
            .cloned()
            .expect("object"),
    );
    let result: CallToolResult = client.call_tool(params).await.expect("answered");
    assert_eq!(result.is_error, Some(false));
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn rename(from: &Path, to: &Path) {
    std::fs::rename(from, to).expect("rename");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_mcp_session_reflects_an_edit_an_addition_a_deletion_and_a_rename() {
    let s = Sandbox::new();
    s.write("ws/src/first.rs", &fn_file("ocelot_alpha"));
    let client = mcp(&s).await;
    let goal = "ocelot pipeline step";
    let p = ask(&client, goal).await;
    assert!(p.contains("ocelot_alpha"), "{p}");

    s.write("ws/src/first.rs", &fn_file("ocelot_alphabet"));
    let p = ask(&client, goal).await;
    assert!(p.contains("ocelot_alphabet"), "the edit is served: {p}");

    s.write("ws/src/second.rs", &fn_file("ocelot_gamma"));
    let p = ask(&client, goal).await;
    assert!(p.contains("ocelot_gamma"), "the new file is found: {p}");

    std::fs::remove_file(s.path("ws/src/second.rs")).expect("delete");
    let p = ask(&client, goal).await;
    assert!(!p.contains("ocelot_gamma"), "the deleted file is gone: {p}");

    rename(&s.path("ws/src/first.rs"), &s.path("ws/src/renamed.rs"));
    let p = ask(&client, goal).await;
    assert!(p.contains("src/renamed.rs"), "the new path is cited: {p}");
    assert!(!p.contains("src/first.rs"), "the old path is not: {p}");
    client.cancel().await.expect("cancel");
}
