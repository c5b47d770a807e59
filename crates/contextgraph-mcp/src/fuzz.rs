//! Fuzz target bodies (not API: hidden from the docs, may change any time).
//!
//! [`mcp_server`] and [`mcp_bridge`] are the whole bodies of the targets of
//! the same names: the libFuzzer programs in the repository's `fuzz/`
//! workspace call them with the fuzzer's bytes, and a stable test replays
//! every committed seed and regression input through them
//! (`tests/it/fuzz_replay.rs`). A body panics exactly when a property
//! breaks.

use std::sync::OnceLock;
use std::time::Duration;

use contextgraph_types::Timestamp;
use rmcp::model::{JsonObject, ListResourcesResult, ReadResourceResult};
use serde_json::Value;

use crate::bridge::frames::{recorded_at, resource_frame, resource_text, ResourceText};
use crate::bridge::rank;
use crate::guard::{check_line, guarded};
use crate::{
    ContextService, ContextToolReply, ContextToolRequest, Health, McpServer, McpServerOptions,
    ProviderContribution, ProviderListing,
};

/// A context service without an index: it answers every request from the
/// request itself, at once, so the target exercises only the MCP side.
struct Echo;

impl ContextService for Echo {
    async fn get_context(&self, request: ContextToolRequest) -> Result<ContextToolReply, String> {
        if request.goal.starts_with("fail") {
            return Err(format!("provider `echo` failed on {:?}", request.goal));
        }
        Ok(ContextToolReply {
            prompt: format!("{} {:?} {:?}", request.goal, request.kinds, request.anchors),
            frames: Vec::new(),
            providers: vec![ProviderContribution {
                provider_id: "echo".into(),
                status: "accepted".into(),
                frames_offered: 1,
                frames_included: 1,
                detail: request.session,
            }],
            session: None,
        })
    }

    async fn list_providers(&self) -> Result<Vec<ProviderListing>, String> {
        Ok(vec![ProviderListing {
            name: "echo".into(),
            version: None,
            transport: "builtin".into(),
            consent: "not_needed".into(),
            health: Health {
                ok: true,
                latency_ms: Some(0),
                error: None,
            },
        }])
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the mcp_server target")
    })
}

/// What a client sends first so that the rest of an input reaches the tools.
const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

/// Longest a session on one input may take before it counts as a hang.
const SESSION_DEADLINE: Duration = Duration::from_secs(10);

/// `mcp_server`: the input as what an MCP client sends `cgp mcp` on stdin
/// (after a valid handshake when its first byte is even), one session of
/// the real server (the line guard, rmcp, the tools) over a service without
/// an index. The session ends when the input does, within
/// `SESSION_DEADLINE`. Every line also goes through the guard alone (a
/// refusal has a JSON-RPC error code), and every `params.arguments` object
/// through both tools directly.
pub fn mcp_server(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let mut input = Vec::with_capacity(HANDSHAKE.len() + rest.len());
    if first % 2 == 0 {
        input.extend_from_slice(HANDSHAKE.as_bytes());
    }
    input.extend_from_slice(rest);
    let server = McpServer::new(Echo, McpServerOptions::default());
    runtime().block_on(async {
        for line in rest.split(|&b| b == b'\n') {
            match check_line(line) {
                Ok(_) => {}
                Err(refusal) => {
                    assert!(
                        [-32700, -32600, -32602].contains(&refusal.code),
                        "a refusal is a JSON-RPC error: {refusal:?}"
                    );
                    let _ = refusal.response().to_string();
                }
            }
            let arguments = serde_json::from_slice::<Value>(line)
                .ok()
                .and_then(|v| v.get("params")?.get("arguments")?.as_object().cloned());
            if let Some(arguments) = arguments {
                let arguments: JsonObject = arguments;
                let _ = server.get_context(Some(&arguments)).await;
                let _ = server.list_providers(Some(&arguments)).await;
            }
        }
        let transport = guarded(std::io::Cursor::new(input), tokio::io::sink());
        let session = server.clone().serve_transport(transport);
        if tokio::time::timeout(SESSION_DEADLINE, session)
            .await
            .is_err()
        {
            panic!("the MCP session did not end within {SESSION_DEADLINE:?} of its input");
        }
    });
}

/// Largest resource text the target lets through (the bridge's option).
const MAX_RESOURCE_BYTES: usize = 64 * 1024;

/// `mcp_bridge`: the input as what an MCP server answers the bridge, one
/// item per line: the goal, then a `resources/list` result, then
/// `resources/read` results, each parsed into the rmcp types rmcp decodes
/// responses into. The bridge's handling of them (ranking, text
/// extraction with its size bound, frame building) never panics, and every
/// frame it builds from whatever a server sent passes the protocol's
/// frame validation (the host would otherwise quarantine the answer).
pub fn mcp_bridge(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let goal = lines.next().unwrap_or_default();
    let Some(listing) = lines
        .next()
        .and_then(|l| serde_json::from_str::<ListResourcesResult>(l).ok())
    else {
        return;
    };
    let reads: Vec<ReadResourceResult> =
        lines.filter_map(|l| serde_json::from_str(l).ok()).collect();
    let resources: Vec<_> = listing
        .resources
        .into_iter()
        .filter(|r| !r.uri.is_empty())
        .collect();
    let terms = rank::terms(goal);
    let anchors = vec![goal.to_owned()];
    let picked = rank::pick(&resources, &terms, &anchors, 16);
    let read_at = Timestamp::from_unix(1_700_000_000, 0);
    for (&i, read) in picked.iter().zip(&reads) {
        let resource = &resources[i];
        let ResourceText::Text { text, mime } = resource_text(&read.contents, MAX_RESOURCE_BYTES)
        else {
            continue;
        };
        let meta = rank::metadata_score(resource, &terms);
        let content = rank::content_score(&text, &terms);
        let score = rank::score(meta, content, rank::anchored(&resource.uri, &anchors));
        assert!((0.0..=1.0).contains(&score), "score {score} in [0, 1]");
        let recorded = recorded_at(resource, read_at);
        let frame = resource_frame(resource, &text, mime.as_deref(), score, "fuzz", recorded);
        let violations = frame.validate();
        assert!(
            violations.is_empty(),
            "the bridge built an invalid frame from {:?}: {violations:?}",
            resource.uri
        );
    }
}
