//! The MCP server against a real rmcp client over an in-process pipe, with a
//! fake [`ContextService`] standing in for the engine.

use std::sync::{Arc, Mutex};

use contextgraph_compose::Citation;
use contextgraph_mcp::{
    estimate_model_tokens, ContextService, ContextToolReply, ContextToolRequest, FrameEntry,
    Health, McpServer, McpServerOptions, Preparing, ProviderContribution, ProviderListing,
    Readiness, SessionReply,
};
use contextgraph_types::{FrameId, FrameKind, UsageReport};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
use serde_json::{json, Value};

#[derive(Clone, Default)]
struct Fake {
    seen: Arc<Mutex<Vec<ContextToolRequest>>>,
    /// One citation per this many budget tokens (0: one citation).
    budget_per_citation: u32,
    fail: bool,
    /// Answer as session turns (ticket = the call's number) and record commits.
    sessions: bool,
    commits: Arc<Mutex<Vec<(String, u64)>>>,
    /// While set, the service is still starting (an index being built).
    preparing: Arc<Mutex<Option<Preparing>>>,
}

impl ContextService for Fake {
    async fn get_context(&self, request: ContextToolRequest) -> Result<ContextToolReply, String> {
        self.seen.lock().unwrap().push(request.clone());
        if self.fail {
            return Err("provider `workspace` crashed: index unreadable".into());
        }
        let n = request
            .budget
            .checked_div(self.budget_per_citation)
            .unwrap_or(1)
            .max(1);
        let frames = (0..n)
            .map(|i| {
                let citation = Citation {
                    label: format!("src/file_{i}.rs L1-20"),
                    frame: FrameId {
                        provider_id: "workspace".into(),
                        frame_id: format!("snippet:src/file_{i}.rs:1"),
                        content_digest: Some(format!("sha256:{}", "a".repeat(64))),
                    },
                    provenance: vec![],
                    merged: vec![],
                };
                FrameEntry::from_citation(&citation, Some(0.5))
            })
            .collect();
        Ok(ContextToolReply {
            prompt: format!(
                "<context-frame provider=\"workspace\" id=\"x\" kind=\"snippet\" label=\"src/file_0.rs L1-20\">\nfn {}() {{}}\n</context-frame>\n",
                request.goal.replace(' ', "_")
            ),
            frames,
            providers: vec![ProviderContribution {
                provider_id: "workspace".into(),
                status: "accepted".into(),
                frames_offered: n,
                frames_included: n,
                detail: None,
            }],
            session: self.sessions.then(|| SessionReply {
                ticket: self.seen.lock().unwrap().len() as u64,
                notes: "Session turn 2: 0 block(s) sent below, 1 already in context.".into(),
                report: json!({"turn": 2}),
                usage: UsageReport::default(),
            }),
        })
    }

    async fn commit_session(&self, key: &str, ticket: u64) {
        self.commits.lock().unwrap().push((key.to_owned(), ticket));
    }

    fn readiness(&self) -> Readiness {
        match self.preparing.lock().unwrap().clone() {
            Some(p) => Readiness::Preparing(p),
            None => Readiness::Ready,
        }
    }

    async fn list_providers(&self) -> Result<Vec<ProviderListing>, String> {
        Ok(vec![ProviderListing {
            name: "workspace".into(),
            version: Some("0.1.0".into()),
            transport: "builtin".into(),
            consent: "not_needed".into(),
            health: Health {
                ok: true,
                latency_ms: Some(3),
                error: None,
            },
        }])
    }
}

async fn connect(fake: Fake, options: McpServerOptions) -> RunningService<RoleClient, ()> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let server = McpServer::new(fake, options);
    tokio::spawn(async move {
        let _ = server.serve_transport(server_io).await;
    });
    ().serve(client_io).await.expect("client initializes")
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    client.call_tool(params).await.expect("tool call answered")
}

fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn whole_estimate(result: &CallToolResult) -> u64 {
    let text: usize = texts(result).iter().map(String::len).sum();
    let structured = result
        .structured_content
        .as_ref()
        .map_or(0, |v| v.to_string().len());
    estimate_model_tokens(text + structured)
}

#[tokio::test]
async fn tools_are_listed_with_their_input_schemas() {
    let client = connect(Fake::default(), McpServerOptions::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["get_context", "list_providers"]);
    let schema = Value::Object((*tools[0].input_schema).clone());
    assert_eq!(schema["required"], json!(["goal"]));
    assert_eq!(
        schema["properties"]["kinds"]["items"]["enum"],
        json!(["snippet", "symbol", "fact", "doc", "memory", "episode", "graph"])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn get_context_returns_the_prompt_as_text_and_citations_as_structured_content() {
    let fake = Fake::default();
    let client = connect(fake.clone(), McpServerOptions::default()).await;
    let result = call(
        &client,
        "get_context",
        json!({"goal": "retry loop", "budget": 4000, "kinds": ["snippet"], "anchors": ["src/net.rs"]}),
    )
    .await;
    assert_eq!(result.is_error, Some(false));
    let text = texts(&result);
    assert_eq!(
        text.len(),
        1,
        "no cap note when nothing was capped: {text:?}"
    );
    assert!(text[0].contains("<context-frame provider=\"workspace\""));
    assert!(text[0].contains("fn retry_loop()"));
    let s = result.structured_content.unwrap();
    assert_eq!(s["frames"][0]["label"], "src/file_0.rs L1-20");
    assert_eq!(s["frames"][0]["provider"], "workspace");
    assert_eq!(
        s["budget"],
        json!({"requested": 4000, "applied": 4000, "cap": 25000, "capped": false})
    );
    assert_eq!(s["providers"][0]["status"], "accepted");
    let seen = fake.seen.lock().unwrap().clone();
    // Every call is a turn of the connection's session.
    assert!(seen[0].session.is_some());
    assert_eq!(
        seen,
        vec![ContextToolRequest {
            goal: "retry loop".into(),
            budget: 4000,
            kinds: vec![FrameKind::Snippet],
            anchors: vec!["src/net.rs".into()],
            fresh: false,
            session: seen[0].session.clone(),
        }]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_omitted_budget_uses_the_default() {
    let fake = Fake::default();
    let options = McpServerOptions {
        default_budget: 1234,
        ..McpServerOptions::default()
    };
    let client = connect(fake.clone(), options).await;
    let result = call(&client, "get_context", json!({"goal": "g"})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(fake.seen.lock().unwrap()[0].budget, 1234);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_budget_over_the_result_cap_is_capped_and_the_result_says_so() {
    let fake = Fake::default();
    let options = McpServerOptions {
        max_result_tokens: 2000,
        ..McpServerOptions::default()
    };
    let client = connect(fake.clone(), options).await;
    let result = call(
        &client,
        "get_context",
        json!({"goal": "g", "budget": 50000}),
    )
    .await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(fake.seen.lock().unwrap()[0].budget, 2000);
    let text = texts(&result);
    assert!(
        text.iter()
            .any(|t| t.contains("capped at 2000") && t.contains("50000")),
        "{text:?}"
    );
    let s = result.structured_content.unwrap();
    assert_eq!(
        s["budget"],
        json!({"requested": 50000, "applied": 2000, "cap": 2000, "capped": true})
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_result_too_large_for_the_cap_is_recomposed_smaller_until_it_fits() {
    // Citations grow with the budget (one per 10 tokens), so the first
    // composition at the cap overshoots it several times over.
    let fake = Fake {
        budget_per_citation: 10,
        ..Fake::default()
    };
    let client = connect(fake.clone(), McpServerOptions::default()).await;
    let result = call(
        &client,
        "get_context",
        json!({"goal": "g", "budget": 25000}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{:?}", texts(&result));
    assert!(
        whole_estimate(&result) <= 25000,
        "result ≈{} tokens",
        whole_estimate(&result)
    );
    let budgets: Vec<u32> = fake.seen.lock().unwrap().iter().map(|r| r.budget).collect();
    assert!(
        budgets.len() >= 2 && budgets.windows(2).all(|w| w[1] < w[0]),
        "{budgets:?}"
    );
    let s = result.structured_content.unwrap();
    assert_eq!(s["budget"]["capped"], true);
    assert_eq!(s["budget"]["applied"], *budgets.last().unwrap());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_are_an_is_error_result_and_the_session_survives() {
    let fake = Fake::default();
    let client = connect(fake.clone(), McpServerOptions::default()).await;
    for (args, needle) in [
        (json!({}), "`goal` is required"),
        (json!({"goal": ""}), "`goal` is empty"),
        (
            json!({"goal": "g", "budget": "lots"}),
            "`budget` must be a positive whole number",
        ),
        (json!({"goal": "g", "kinds": ["code"]}), "not a frame kind"),
        (
            json!({"goal": "g", "anchors": [1]}),
            "`anchors[0]` must be a string",
        ),
        (
            json!({"goal": "g", "budjet": 5}),
            "unknown argument \"budjet\"",
        ),
    ] {
        let result = call(&client, "get_context", args.clone()).await;
        assert_eq!(result.is_error, Some(true), "{args}");
        let text = texts(&result).join(" ");
        assert!(text.contains(needle), "{args}: {text}");
    }
    assert!(
        fake.seen.lock().unwrap().is_empty(),
        "invalid calls never reach the engine"
    );
    let ok = call(&client, "get_context", json!({"goal": "still alive"})).await;
    assert_eq!(ok.is_error, Some(false));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_engine_failure_is_an_is_error_result_naming_it() {
    let fake = Fake {
        fail: true,
        ..Fake::default()
    };
    let client = connect(fake, McpServerOptions::default()).await;
    let result = call(&client, "get_context", json!({"goal": "g"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(texts(&result)[0].contains("index unreadable"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error() {
    let client = connect(Fake::default(), McpServerOptions::default()).await;
    let err = client
        .call_tool(CallToolRequestParams::new("get_weather"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("get_weather"), "{err}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn list_providers_reports_name_version_transport_consent_and_health() {
    let client = connect(Fake::default(), McpServerOptions::default()).await;
    let result = call(&client, "list_providers", json!({})).await;
    assert_eq!(result.is_error, Some(false));
    let text = texts(&result).join("");
    assert!(
        text.contains("workspace 0.1.0 via builtin; consent not_needed; healthy (3 ms)"),
        "{text}"
    );
    let s = result.structured_content.unwrap();
    assert_eq!(
        s["providers"][0]["health"],
        json!({"ok": true, "latency_ms": 3})
    );
    let bad = call(&client, "list_providers", json!({"verbose": true})).await;
    assert_eq!(bad.is_error, Some(true));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn only_the_session_turn_actually_sent_is_committed() {
    // The first compositions overshoot the cap and are discarded: the model
    // never sees them, so the session must not record them as delivered.
    let fake = Fake {
        budget_per_citation: 10,
        sessions: true,
        ..Fake::default()
    };
    let client = connect(fake.clone(), McpServerOptions::default()).await;
    let result = call(
        &client,
        "get_context",
        json!({"goal": "g", "budget": 25000}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{:?}", texts(&result));
    let seen = fake.seen.lock().unwrap().clone();
    assert!(seen.len() >= 2, "recomposed: {}", seen.len());
    let commits = fake.commits.lock().unwrap().clone();
    assert_eq!(
        commits,
        vec![(seen[0].session.clone().unwrap(), seen.len() as u64)],
        "one commit, of the last attempt"
    );
    // The notes come first, outside the prompt; the account and usage are structured.
    assert!(texts(&result)[0].starts_with("Session turn 2"));
    let s = result.structured_content.unwrap();
    assert_eq!(s["session"]["turn"], 2);
    assert!(s["usage"].is_object());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn each_connection_and_each_named_session_is_a_session_of_its_own() {
    let fake = Fake {
        sessions: true,
        ..Fake::default()
    };
    let a = connect(fake.clone(), McpServerOptions::default()).await;
    let b = connect(fake.clone(), McpServerOptions::default()).await;
    call(&a, "get_context", json!({"goal": "g"})).await;
    call(&a, "get_context", json!({"goal": "g"})).await;
    call(&a, "get_context", json!({"goal": "g", "session": "side"})).await;
    call(&b, "get_context", json!({"goal": "g"})).await;
    let keys: Vec<String> = fake
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.session.clone().unwrap())
        .collect();
    assert_eq!(keys[0], keys[1], "one connection, one session");
    assert_ne!(keys[0], keys[2], "a named session is separate");
    assert_ne!(keys[0], keys[3], "another connection is separate");
    let bad = call(&a, "get_context", json!({"goal": "g", "session": "../x"})).await;
    assert_eq!(bad.is_error, Some(true));
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

fn indexing(done: u64) -> Preparing {
    Preparing {
        done,
        total: Some(24_000),
        message: format!("cgp is indexing /repo: {done} of 24000 files"),
    }
}

#[tokio::test]
async fn a_call_while_the_service_starts_answers_how_far_it_is_when_the_wait_runs_out() {
    let fake = Fake::default();
    *fake.preparing.lock().unwrap() = Some(indexing(1200));
    let options = McpServerOptions {
        ready_wait: std::time::Duration::from_millis(300),
        ..McpServerOptions::default()
    };
    // initialize and tools/list never wait for the service.
    let client = connect(fake.clone(), options).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    for tool in ["get_context", "list_providers"] {
        let args = if tool == "get_context" {
            json!({"goal": "g"})
        } else {
            json!({})
        };
        let result = call(&client, tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        let text = text_of(&result);
        assert!(
            text.starts_with("cgp is indexing /repo: 1200 of 24000 files. No context yet"),
            "{text}"
        );
    }
    assert!(
        fake.seen.lock().unwrap().is_empty(),
        "nothing was asked of a service still starting"
    );

    // Ready during the wait: the call is answered.
    let options = McpServerOptions {
        ready_wait: std::time::Duration::from_secs(30),
        ..McpServerOptions::default()
    };
    let client = connect(fake.clone(), options).await;
    let flip = fake.preparing.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        *flip.lock().unwrap() = None;
    });
    let result = call(&client, "get_context", json!({"goal": "g"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn get_context_says_it_is_not_idempotent_and_how_to_get_held_blocks_again() {
    let client = connect(Fake::default(), McpServerOptions::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    let tool = tools.iter().find(|t| t.name == "get_context").unwrap();
    let hints = tool.annotations.as_ref().unwrap();
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.idempotent_hint, Some(false));
    let description = tool.description.as_deref().unwrap();
    for needle in [
        "Already in context, unchanged (not resent)",
        "\"fresh\": true",
        "new \"session\" name",
    ] {
        assert!(
            description.contains(needle),
            "{needle:?} not in {description}"
        );
    }
    assert!(tool.input_schema["properties"]["fresh"]["type"] == "boolean");
    client.cancel().await.unwrap();
}

fn text_of(result: &CallToolResult) -> String {
    texts(result).join("\n")
}
