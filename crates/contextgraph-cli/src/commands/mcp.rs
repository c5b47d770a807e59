//! `cgp mcp`: an MCP server over stdio, so agents that speak MCP (and
//! consume tools, not CGP frames) get CGP context today.
//!
//! The engine behind `cgp context` (`contextgraph-engine`: cgp.toml's
//! providers, consent, fan-out, composition) is served through
//! `contextgraph-mcp`'s server, whose tools are `get_context` and
//! `list_providers`. The server answers `initialize` and `tools/list` at
//! once; the engine starts (and a cold index builds) in the background,
//! and a tool call meanwhile waits a bounded time with MCP progress, then
//! says how far indexing is. When the client goes (stdin closes) the server
//! stops at once, an index build in progress included. Stdout carries only
//! MCP messages; diagnostics go to stderr.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use clap::Args;
use contextgraph_compose::ProviderStatus as ComposeStatus;
use contextgraph_config::{Config, ProviderKind};
use contextgraph_engine::session::SendReason;
use contextgraph_engine::{
    BuildStep, ConsentState, ContextAnswer, ContextRequest, Engine, EngineOptions, IndexBuild,
    ProviderStatus, Session, SessionTurn,
};
use contextgraph_mcp::{
    rank_by_score, ContextService, ContextToolReply, ContextToolRequest, FrameEntry, Health,
    McpServer, McpServerOptions, Preparing, ProviderContribution, ProviderListing, Readiness,
    SessionReply, SessionSlots, DEFAULT_MAX_RESULT_TOKENS,
};
use serde_json::json;

use super::config::{runtime, ConfigSelection};
use super::CommandError;

/// Arguments of `cgp mcp`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  Register with an MCP client (its JSON config), serving this repository:
    {\"mcpServers\": {\"cgp\": {\"command\": \"cgp\", \"args\": [\"mcp\", \"--dir\", \"/path/to/repo\"]}}}
  Claude Code:
    claude mcp add cgp -- cgp mcp --dir /path/to/repo

  Allow larger tool results (for a client configured with a higher limit):
    cgp mcp --dir . --max-result-tokens 50000

Tools:
  get_context     {goal, budget?, kinds?, anchors?, session?, fresh?} -> the fenced prompt block
                  (text) and {budget, frames, providers, session, usage} (structured: each block's
                  label, provider, id, digest, uri, score, rank and cost, never the text again).
                  budget is in model tokens, default the budget in cgp.toml, capped so the whole
                  result stays under --max-result-tokens; the result says when it was capped. Calls
                  of one connection (or of one named session in it) are turns of a session:
                  evidence already sent and still valid (the provider's verify says so) is listed by
                  label, not resent; changed evidence is resent with a note naming the label it
                  replaces; gone evidence is named as withdrawn. fresh: true starts the session over
                  (everything in full), for a model that lost what it was sent.
  list_providers  {} -> name, version, transport, consent state and health of each provider.

Start-up: initialize and tools/list are answered at once. The providers start, and a repository
never indexed before is indexed, in the background; a tool call meanwhile waits up to
--index-wait seconds, sending MCP progress notifications when the client asked for them, then
answers with how far indexing is. Without --dir, cgp mcp refuses to index / or your home
directory (a client that gives no working directory starts it there): pass --dir.

Bad arguments and provider failures come back as tool errors (isError) with a sentence saying
what to fix; the session stays up. Providers come from cgp.toml (see `cgp config`); with
none, the built-in workspace provider reads --dir in-process. Egress providers without
consent are never queried (grant with `cgp consent grant`).

Exit codes:
  0  the MCP client closed the session
  1  failure: the configuration is wrong, or the client did not initialize
  2  usage error")]
pub struct McpArgs {
    /// The repository to serve, and where cgp.toml is looked for (default:
    /// the current directory, unless that is / or your home directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Use exactly this configuration file instead of looking for cgp.toml
    /// (the per-user file is not read either).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Largest tool result, in model tokens (MCP clients truncate or refuse larger ones).
    #[arg(long, value_name = "TOKENS", default_value_t = DEFAULT_MAX_RESULT_TOKENS,
          value_parser = clap::value_parser!(u32).range(256..))]
    pub max_result_tokens: u32,
    /// Longest a tool call waits for the index being built before it answers
    /// with how far indexing is (MCP clients give up on a request after 60 s).
    #[arg(long, value_name = "SECONDS", default_value_t = 25,
          value_parser = clap::value_parser!(u64).range(0..=50))]
    pub index_wait: u64,
}

/// Run `cgp mcp`.
pub fn run(args: McpArgs) -> Result<(), CommandError> {
    let selection = ConfigSelection {
        dir: args.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
        config: args.config.clone(),
    };
    let config = selection.load()?;
    let refused = refusal(args.dir.is_some(), &config);
    let options = McpServerOptions {
        default_budget: config.budget.value,
        max_result_tokens: args.max_result_tokens,
        server_name: "cgp".to_owned(),
        server_version: env!("CARGO_PKG_VERSION").to_owned(),
        ready_wait: Duration::from_secs(args.index_wait),
    };
    let build = IndexBuild::new();
    hold_for_tests(&build);
    let engine_options = EngineOptions {
        // Stdout is the MCP channel and stderr belongs to the client's log,
        // which is not a terminal: a long index shows there as one line when
        // it starts and one when it ends, never a redrawn bar.
        progress: true,
        grant_command_args: selection.repeat_args(),
        // A long-running server honours grants made while it runs.
        create_consent_store: true,
        // Edits made during the session are re-indexed as they happen.
        watch: true,
        index_build: Some(build.clone()),
        ..EngineOptions::default()
    };
    let shown = std::fs::canonicalize(&selection.dir).unwrap_or_else(|_| selection.dir.clone());
    let dir = selection.dir;
    let runtime = runtime()?;
    let result = runtime.block_on(async move {
        let state = Arc::new(RwLock::new(match &refused {
            Some(message) => Start::Failed(message.clone()),
            None => Start::Starting,
        }));
        match &refused {
            Some(message) => eprintln!("error: {message}"),
            None => {
                // In the background: the client's initialize is answered meanwhile.
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    let started = Engine::start_with(&config, &dir, engine_options).await;
                    let now = match started {
                        Ok(engine) => Start::Ready(Arc::new(engine)),
                        Err(e) => {
                            eprintln!("error: {e}");
                            Start::Failed(e.to_string())
                        }
                    };
                    *state.write().unwrap_or_else(|p| p.into_inner()) = now;
                });
            }
        }
        let server = McpServer::new(
            EngineService {
                state: Arc::clone(&state),
                build: build.clone(),
                root: shown,
                sessions: SessionSlots::new(),
            },
            options,
        );
        let served = server.serve_stdio().await;
        // The client is gone: a build still running stops reading files.
        build.cancel();
        let last = std::mem::replace(
            &mut *state.write().unwrap_or_else(|p| p.into_inner()),
            Start::Failed("the MCP server is shutting down".to_owned()),
        );
        if let Start::Ready(engine) = last {
            if let Ok(engine) = Arc::try_unwrap(engine) {
                engine.shutdown().await;
            }
        }
        served.map_err(CommandError::from)
    });
    // A start or build still under way is not waited for: the process exits
    // (what an index build wrote so far is kept; its files are replaced
    // atomically).
    runtime.shutdown_background();
    result
}

/// Why `cgp mcp` will not index the directory it was started in: `/` or the
/// home directory, with no `--dir`, for a configuration whose workspace
/// provider reads the process's directory. Some MCP clients start servers
/// there when no directory is configured, and walking it all would take
/// hours, silently.
fn refusal(dir_given: bool, config: &Config) -> Option<String> {
    if dir_given {
        return None;
    }
    let reads_cwd = config
        .enabled_providers()
        .any(|p| matches!(p.kind, ProviderKind::Workspace { dir: None }));
    if !reads_cwd {
        return None;
    }
    let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    let place = if cwd == Path::new("/") {
        "the root directory"
    } else if home.as_deref() == Some(cwd.as_path()) {
        "your home directory"
    } else {
        return None;
    };
    let here = crate::terminal::path_for_terminal(&cwd);
    Some(format!(
        "cgp mcp was started in {place} ({here}) with no --dir, and will not index all of it; \
         pass the repository to serve: `cgp mcp --dir /path/to/repo` (in the MCP client's \
         configuration: \"args\": [\"mcp\", \"--dir\", \"/path/to/repo\"]), or `--dir {here}` to serve {place} anyway"
    ))
}

/// The test hook of `IndexBuild::hold_while`, for the tests of this
/// command only (feature `test-fixtures`, never in a release): while the
/// file `CGP_TEST_HOLD_INDEX` names does not exist, the index build reads
/// no file, so a test sees the server answer before the index exists
/// without assuming how long a build takes.
fn hold_for_tests(build: &IndexBuild) {
    #[cfg(feature = "test-fixtures")]
    if let Some(path) = std::env::var_os("CGP_TEST_HOLD_INDEX") {
        let path = PathBuf::from(path);
        build.hold_while(move || !path.exists());
    }
    #[cfg(not(feature = "test-fixtures"))]
    let _ = build;
}

/// Where the engine's start is.
enum Start {
    Starting,
    Ready(Arc<Engine>),
    Failed(String),
}

/// The engine as the MCP server's [`ContextService`], with the sessions of
/// its connections (what each conversation's model already holds).
struct EngineService {
    state: Arc<RwLock<Start>>,
    build: IndexBuild,
    /// The directory served, as shown in progress messages.
    root: PathBuf,
    sessions: SessionSlots<Session>,
}

impl EngineService {
    fn engine(&self) -> Result<Arc<Engine>, String> {
        match &*self.state.read().unwrap_or_else(|p| p.into_inner()) {
            Start::Ready(engine) => Ok(Arc::clone(engine)),
            Start::Failed(message) => Err(message.clone()),
            Start::Starting => Err(self.preparing().message),
        }
    }

    /// How far the start is, in words and figures.
    fn preparing(&self) -> Preparing {
        let s = self.build.snapshot();
        let root = crate::terminal::path_for_terminal(&self.root);
        let secs = s.elapsed.as_secs();
        let message = if s.walking {
            format!("cgp is indexing {root}: listing its files ({secs} s so far)")
        } else if s.files_total == 0 {
            "cgp is starting its providers".to_owned()
        } else if s.files_done < s.files_total {
            let percent = s.files_done * 100 / s.files_total;
            let left = s
                .remaining()
                .map(|d| format!(", about {} to go", duration_words(d)))
                .unwrap_or_default();
            format!(
                "cgp is indexing {root}: {} of {} files ({percent}%) in {secs} s{left}",
                s.files_done, s.files_total
            )
        } else {
            let doing = match s.step {
                BuildStep::Saving => "saving it",
                BuildStep::Embedding => "computing the semantic vectors of its chunks",
                _ => "starting the providers",
            };
            format!(
                "cgp is finishing the index of {root}: {doing} ({} files read, {secs} s so far)",
                s.files_total
            )
        };
        Preparing {
            done: s.files_done,
            total: (s.files_total > 0).then_some(s.files_total),
            message,
        }
    }
}

/// `40 s`, `3 min`.
fn duration_words(d: Duration) -> String {
    let secs = d.as_secs().max(1);
    if secs < 90 {
        format!("{secs} s")
    } else {
        format!("{} min", secs.div_ceil(60))
    }
}

impl ContextService for EngineService {
    async fn get_context(&self, request: ContextToolRequest) -> Result<ContextToolReply, String> {
        let engine = self.engine()?;
        let engine_request = ContextRequest {
            goal: request.goal,
            budget_model_tokens: request.budget,
            kinds: request.kinds,
            anchors: request.anchors,
            ..ContextRequest::default()
        };
        if let Some(key) = request.session {
            let snapshot = self.sessions.snapshot(&key).await;
            // Starting over: as to a model that holds nothing.
            let state = if request.fresh {
                Session::new()
            } else {
                snapshot.state.clone()
            };
            let turn = engine
                .context_in_session(&state, &engine_request)
                .await
                .map_err(|e| e.to_string())?;
            no_provider_answered(&turn.answer)?;
            let ticket = self
                .sessions
                .stage(&key, &snapshot, turn.next_session().clone())
                .await;
            return Ok(session_reply(turn, ticket));
        }
        let answer = engine
            .context(&engine_request)
            .await
            .map_err(|e| e.to_string())?;
        no_provider_answered(&answer)?;
        Ok(reply(answer))
    }

    async fn list_providers(&self) -> Result<Vec<ProviderListing>, String> {
        let engine = self.engine()?;
        Ok(engine.providers().await.iter().map(listing).collect())
    }

    fn readiness(&self) -> Readiness {
        match &*self.state.read().unwrap_or_else(|p| p.into_inner()) {
            Start::Starting => Readiness::Preparing(self.preparing()),
            Start::Ready(_) | Start::Failed(_) => Readiness::Ready,
        }
    }

    async fn commit_session(&self, key: &str, ticket: u64) {
        self.sessions.commit(key, ticket).await;
    }
}

type FrameKey = (String, String);

/// Each accepted frame's score, by provider and frame id.
fn scores(answer: &ContextAnswer) -> BTreeMap<FrameKey, f64> {
    let mut out = BTreeMap::new();
    for o in &answer.outcomes {
        if let ComposeStatus::Accepted { frames } = &o.status {
            for f in frames {
                // Three decimals: an f32 widened to f64 prints 17 digits.
                let score = (f64::from(f.score) * 1000.0).round() / 1000.0;
                out.insert((o.provider_id.clone(), f.id.clone()), score);
            }
        }
    }
    out
}

/// Each served frame's UR1 cost, by provider and frame id.
fn costs(usage: &contextgraph_types::UsageReport) -> BTreeMap<FrameKey, u64> {
    usage
        .providers
        .iter()
        .flat_map(|p| {
            p.served_frames.iter().map(|s| {
                (
                    (s.frame.provider_id.clone(), s.frame.frame_id.clone()),
                    u64::from(s.token_cost),
                )
            })
        })
        .collect()
}

/// A session turn as the tool's reply: the notes and blocks as the prompt,
/// an entry per block sent, the rest of the turn by label.
fn session_reply(turn: SessionTurn, ticket: u64) -> ContextToolReply {
    let scores = scores(&turn.answer);
    let costs = costs(&turn.usage);
    let mut frames: Vec<FrameEntry> = turn
        .sent
        .iter()
        .filter_map(|sent| {
            let citation = turn.citations.iter().find(|c| c.label == sent.label)?;
            let key = (sent.frame.provider_id.clone(), sent.frame.frame_id.clone());
            let mut entry = FrameEntry::from_citation(citation, scores.get(&key).copied());
            entry.tokens = costs.get(&key).copied().unwrap_or(0);
            let (reason, replaces, detail) = match &sent.why {
                SendReason::New => (None, None, None),
                SendReason::Changed { replaces } => (Some("changed"), Some(replaces.clone()), None),
                SendReason::Unconfirmed { replaces, detail } => (
                    Some("unconfirmed"),
                    Some(replaces.clone()),
                    Some(detail.clone()),
                ),
            };
            entry.reason = reason.map(str::to_owned);
            entry.replaces = replaces;
            entry.detail = detail;
            Some(entry)
        })
        .collect();
    rank_by_score(&mut frames);
    let report = json!({
        "turn": turn.turn,
        // Named in the text's note; a count here, not the labels again.
        "unchanged": turn.unchanged.len(),
        "moved": turn
            .moved
            .iter()
            .map(|m| json!({"label": m.label, "previous": m.previous}))
            .collect::<Vec<_>>(),
        "withdrawn": turn
            .withdrawn
            .iter()
            .map(|w| json!({"label": w.label, "reason": w.reason}))
            .collect::<Vec<_>>(),
        "figures": turn.figures,
        "totals": turn.totals,
    });
    let notes = turn.notes.clone();
    let usage = turn.usage.clone();
    let prompt = turn.prompt.clone();
    let mut out = reply(turn.answer);
    out.prompt = prompt;
    out.frames = frames;
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
    let scores = scores(&answer);
    let costs = costs(&answer.composition.usage);
    let mut frames: Vec<FrameEntry> = answer
        .composition
        .citations
        .iter()
        .map(|c| {
            let key = (c.frame.provider_id.clone(), c.frame.frame_id.clone());
            let mut entry = FrameEntry::from_citation(c, scores.get(&key).copied());
            entry.tokens = costs.get(&key).copied().unwrap_or(0);
            entry
        })
        .collect();
    rank_by_score(&mut frames);
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
        frames,
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
