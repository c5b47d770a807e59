//! `cgp mcp` end to end: the real binary spawned by rmcp's MCP client over a
//! real pipe, serving a temp workspace through the engine.

use std::path::Path;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "src/retry.rs",
        "/// Retries a request with exponential backoff.\npub fn retry_with_backoff(attempts: u32) -> u32 {\n    let mut delay = 100;\n    for _ in 0..attempts {\n        delay *= 2;\n    }\n    delay\n}\n",
    );
    write(
        "docs/retry.md",
        "# Retry policy\n\nThe client retries with exponential backoff, doubling the delay.\n",
    );
    dir
}

fn command(dir: &Path, extra: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cgp"));
    cmd.arg("mcp")
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .env("CONTEXTGRAPH_WORKSPACE_CACHE", dir.join(".cache-for-test"))
        .env("HOME", dir.join(".home"))
        .env("XDG_CONFIG_HOME", dir.join(".home/.config"))
        .env("CGP_DATA_DIR", dir.join(".data"))
        .env_remove("CGP_CONFIG")
        .kill_on_drop(true);
    cmd
}

async fn connect(dir: &Path, extra: &[&str]) -> RunningService<RoleClient, ()> {
    let transport = TokioChildProcess::new(command(dir, extra)).expect("cgp mcp spawns");
    ().serve(transport).await.expect("cgp mcp initializes")
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    client
        .call_tool(params)
        .await
        .expect("the tool call is answered")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_context_over_a_real_pipe_returns_fenced_evidence_and_citations() {
    let ws = workspace();
    let client = connect(ws.path(), &[]).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("cgp")
    );

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["get_context", "list_providers"]);

    let result = call(
        &client,
        "get_context",
        json!({"goal": "retry backoff delay", "budget": 4000, "anchors": ["src/retry.rs"]}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let prompt = text(&result);
    // Fenced under the provider's cgp.toml key (the built-in `workspace`):
    // a session names its first provider once, for all its blocks.
    assert!(
        prompt.contains("a block without provider= is from provider \"workspace\""),
        "{prompt}"
    );
    assert!(prompt.contains("retry_with_backoff"), "{prompt}");
    let s = result.structured_content.expect("structured content");
    let frames = s["frames"].as_array().expect("frames");
    assert!(!frames.is_empty());
    for (i, f) in frames.iter().enumerate() {
        let label = f["label"].as_str().unwrap();
        assert!(
            prompt.contains(&format!("label=\"{label}\"")),
            "{label} not in prompt"
        );
        // Cited under the provider's cgp.toml key, ranked, costed, no text.
        assert_eq!(f["provider"], "workspace");
        assert!(
            f["rank"]
                .as_u64()
                .is_some_and(|r| r >= 1 && r as usize <= frames.len()),
            "{f}"
        );
        assert!(f["tokens"].as_u64().is_some_and(|t| t > 0), "{f}");
        assert!(
            f.get("content").is_none() && f.get("provenance").is_none(),
            "frame {i}: {f}"
        );
    }
    assert!(frames.iter().any(|f| f["label"]
        .as_str()
        .is_some_and(|l| l.starts_with("src/retry.rs"))));
    assert_eq!(s["budget"]["applied"], 4000);
    assert_eq!(s["budget"]["capped"], false);
    assert_eq!(s["providers"][0]["status"], "accepted");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_tool_errors_and_the_session_stays_up() {
    let ws = workspace();
    let client = connect(ws.path(), &[]).await;
    let bad = call(
        &client,
        "get_context",
        json!({"goal": "", "kinds": ["code"]}),
    )
    .await;
    assert_eq!(bad.is_error, Some(true));
    let message = text(&bad);
    assert!(
        message.contains("`goal` is empty") && message.contains("\"code\", not a frame kind"),
        "{message}"
    );
    let ok = call(&client, "get_context", json!({"goal": "retry policy"})).await;
    assert_eq!(ok.is_error, Some(false), "{}", text(&ok));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_over_max_result_tokens_is_capped_and_says_so() {
    let ws = workspace();
    let client = connect(ws.path(), &["--max-result-tokens", "2000"]).await;
    let result = call(
        &client,
        "get_context",
        json!({"goal": "retry backoff", "budget": 100000}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert!(
        text(&result).contains("capped at 2000"),
        "{}",
        text(&result)
    );
    let s = result.structured_content.unwrap();
    assert_eq!(s["budget"]["capped"], true);
    assert!(s["budget"]["applied"].as_u64().unwrap() <= 2000);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_providers_names_the_builtin_workspace_provider_and_its_health() {
    let ws = workspace();
    let client = connect(ws.path(), &[]).await;
    let result = call(&client, "list_providers", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let s = result.structured_content.clone().unwrap();
    let p = &s["providers"][0];
    assert_eq!(p["name"], "workspace");
    assert_eq!(p["consent"], "not_required");
    assert_eq!(p["health"]["ok"], true);
    assert!(text(&result).contains("workspace"));
    client.cancel().await.unwrap();
}

#[test]
fn mcp_help_has_examples_and_exits_zero() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(["mcp", "--help"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.contains("Examples:")
            && help.contains("get_context")
            && help.contains("--max-result-tokens")
    );
    assert!(!help.contains('\x1b'), "NO_COLOR respected");
}

#[test]
fn a_max_result_tokens_below_the_floor_is_a_usage_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cgp"))
        .args(["mcp", "--max-result-tokens", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
