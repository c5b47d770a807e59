//! `cgp mcp`: an MCP server over stdio, so agents that speak MCP (and
//! consume tools, not CGP frames) get CGP context today.
//!
//! The engine behind `cgp context` (`contextgraph-engine`: cgp.toml's
//! providers, consent, fan-out, composition) is started once and served
//! through `contextgraph-mcp`'s server, whose tools are `get_context` and
//! `list_providers`. Stdout carries only MCP messages; diagnostics go to
//! stderr.

use std::sync::Arc;

use clap::Args;
use contextgraph_engine::{
    ConsentState, ContextAnswer, ContextRequest, Engine, EngineOptions, ProviderStatus, Session,
    SessionTurn,
};
use contextgraph_mcp::{
    ContextService, ContextToolReply, ContextToolRequest, Health, McpServer, McpServerOptions,
    ProviderContribution, ProviderListing, SessionReply, SessionSlots, DEFAULT_MAX_RESULT_TOKENS,
};

use super::config::{runtime, ConfigSelection};
use super::CommandError;

/// Arguments of `cgp mcp`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  Register with an MCP client (its JSON config), serving this repository:
    {\"mcpServers\": {\"cgp\": {\"command\": \"cgp\", \"args\": [\"mcp\", \"--dir\", \"/path/to/repo\"]}}}

  Allow larger tool results (for a client configured with a higher limit):
    cgp mcp --dir . --max-result-tokens 50000

Tools:
  get_context     {goal, budget?, kinds?, anchors?, session?} -> the fenced prompt block (text) and
                  {budget, citations, providers, session, usage} (structured). budget is in model
                  tokens, default the budget in cgp.toml, capped so the whole result stays under
                  --max-result-tokens; the result says when it was capped. Calls of one connection
                  (or of one named session in it) are turns of a session: evidence already sent and
                  still valid (the provider's verify says so) is listed by label, not resent; changed
                  evidence is resent with a note naming the label it replaces; gone evidence is
                  named as withdrawn.
  list_providers  {} -> name, version, transport, consent state and health of each provider.

Bad arguments and provider failures come back as tool errors (isError) with a sentence saying
what to fix; the session stays up. Providers come from cgp.toml (see `cgp config`); with
none, the built-in workspace provider reads --dir in-process. Egress providers without
consent are never queried (grant with `cgp consent grant`).

Exit codes:
  0  the MCP client closed the session
  1  failure: the configuration is wrong, or the client did not initialize
  2  usage error")]
pub struct McpArgs {
    /// The workspace to draw context from, and where cgp.toml is looked for.
    #[command(flatten)]
    pub selection: ConfigSelection,
    /// Largest tool result, in model tokens (MCP clients truncate or refuse larger ones).
    #[arg(long, value_name = "TOKENS", default_value_t = DEFAULT_MAX_RESULT_TOKENS,
          value_parser = clap::value_parser!(u32).range(256..))]
    pub max_result_tokens: u32,
}

/// Run `cgp mcp`.
pub fn run(args: McpArgs) -> Result<(), CommandError> {
    let config = args.selection.load()?;
    let options = McpServerOptions {
        default_budget: config.budget.value,
        max_result_tokens: args.max_result_tokens,
        server_name: "cgp".to_owned(),
        server_version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let engine_options = EngineOptions {
        // Stdout is the MCP channel and stderr belongs to the client's log,
        // which is not a terminal: a long index shows there as one line when
        // it starts and one when it ends, never a redrawn bar.
        progress: true,
        grant_command_args: args.selection.repeat_args(),
        // A long-running server honours grants made while it runs.
        create_consent_store: true,
        // Edits made during the session are re-indexed as they happen.
        watch: true,
        ..EngineOptions::default()
    };
    let dir = args.selection.dir.clone();
    runtime()?.block_on(async move {
        let engine = Arc::new(Engine::start_with(&config, &dir, engine_options).await?);
        let server = McpServer::new(
            EngineService {
                engine: Arc::clone(&engine),
                sessions: SessionSlots::new(),
            },
            options,
        );
        let served = server.serve_stdio().await;
        if let Ok(engine) = Arc::try_unwrap(engine) {
            engine.shutdown().await;
        }
        served.map_err(CommandError::from)
    })
}

/// The engine as the MCP server's [`ContextService`], with the sessions of
/// its connections (what each conversation's model already holds).
struct EngineService {
    engine: Arc<Engine>,
    sessions: SessionSlots<Session>,
}

impl ContextService for EngineService {
    async fn get_context(&self, request: ContextToolRequest) -> Result<ContextToolReply, String> {
        let engine_request = ContextRequest {
            goal: request.goal,
            budget_model_tokens: request.budget,
            kinds: request.kinds,
            anchors: request.anchors,
            ..ContextRequest::default()
        };
        if let Some(key) = request.session {
            let snapshot = self.sessions.snapshot(&key).await;
            let turn = self
                .engine
                .context_in_session(&snapshot.state, &engine_request)
                .await
                .map_err(|e| e.to_string())?;
            no_provider_answered(&turn.answer)?;
            let ticket = self
                .sessions
                .stage(&key, &snapshot, turn.next_session().clone())
                .await;
            return Ok(session_reply(turn, ticket));
        }
        let answer = self
            .engine
            .context(&engine_request)
            .await
            .map_err(|e| e.to_string())?;
        no_provider_answered(&answer)?;
        Ok(reply(answer))
    }

    async fn list_providers(&self) -> Result<Vec<ProviderListing>, String> {
        Ok(self.engine.providers().await.iter().map(listing).collect())
    }

    async fn commit_session(&self, key: &str, ticket: u64) {
        self.sessions.commit(key, ticket).await;
    }
}

/// A session turn as the tool's reply: the blocks sent as the prompt, the
/// session's labels as citations, the notes and figures beside them.
fn session_reply(turn: SessionTurn, ticket: u64) -> ContextToolReply {
    let mut report = serde_json::to_value(&turn).unwrap_or(serde_json::Value::Null);
    // The result is size-capped: sent, unchanged and moved frames are named
    // by label, and `citations` maps each label to its full identity.
    for list in ["sent", "unchanged", "moved"] {
        if let Some(items) = report.get_mut(list).and_then(|v| v.as_array_mut()) {
            for item in items {
                if let Some(map) = item.as_object_mut() {
                    map.remove("frame");
                }
            }
        }
    }
    let notes = turn.notes.clone();
    let usage = turn.usage.clone();
    let citations = turn.citations.clone();
    let prompt = turn.prompt.clone();
    let mut out = reply(turn.answer);
    out.prompt = prompt;
    out.citations = citations;
    out.session = Some(SessionReply {
        ticket,
        notes,
        report,
        usage,
    });
    out
}

/// Fail when no provider answered.
fn no_provider_answered(answer: &ContextAnswer) -> Result<(), String> {
    {
        // As `cgp context` exits 1: with no provider answering there is
        // no context, and the client must not take an empty prompt as one.
        if answer.answered() == 0 {
            let reasons: Vec<String> = answer
                .providers
                .iter()
                .map(|p| {
                    format!(
                        "provider {}: {}",
                        p.name,
                        p.detail.as_deref().unwrap_or("contributed nothing")
                    )
                })
                .collect();
            return Err(format!("no provider answered: {}", reasons.join("; ")));
        }
        Ok(())
    }
}

/// The engine's answer as the tool's reply: each configured provider's
/// summary, with the frame counts of the composition audit.
fn reply(answer: ContextAnswer) -> ContextToolReply {
    let audit = &answer.composition.audit.providers;
    let providers = answer
        .providers
        .iter()
        .map(|p| {
            let counted = p
                .provider_id
                .as_deref()
                .and_then(|id| audit.iter().find(|a| a.provider_id == id));
            ProviderContribution {
                provider_id: p.provider_id.clone().unwrap_or_else(|| p.name.clone()),
                status: p.status.as_str().to_owned(),
                frames_offered: counted.map_or(0, |a| a.frames_offered),
                frames_included: counted.map_or(0, |a| a.frames_included),
                detail: p.detail.clone(),
            }
        })
        .collect();
    ContextToolReply {
        prompt: answer.composition.prompt,
        citations: answer.composition.citations,
        providers,
        session: None,
    }
}

fn listing(status: &ProviderStatus) -> ProviderListing {
    let consent = match &status.consent {
        ConsentState::NotRequired => "not_required".to_owned(),
        ConsentState::Granted { .. } => "granted".to_owned(),
        ConsentState::Required { command, .. } => format!("required (run: {command})"),
        ConsentState::Unknown => "unknown".to_owned(),
    };
    let health = match &status.health {
        Ok(latency) => Health {
            ok: true,
            latency_ms: Some(u64::try_from(latency.as_millis()).unwrap_or(u64::MAX)),
            error: None,
        },
        Err(e) => Health {
            ok: false,
            latency_ms: None,
            error: Some(e.clone()),
        },
    };
    ProviderListing {
        name: status.name.clone(),
        version: status.version.clone(),
        transport: status.transport.clone(),
        consent,
        health,
    }
}
