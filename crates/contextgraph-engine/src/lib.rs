//! The pipeline every Context Graph Protocol front end shares — `cgp
//! context`, `cgp providers`, the MCP server: from a
//! [`Config`] and a workspace, start the
//! configured providers, gate them on consent, fan the query out, and
//! compose one prompt.
//!
//! ```no_run
//! # async fn demo() -> Result<(), contextgraph_engine::EngineError> {
//! use contextgraph_engine::{ContextRequest, Engine};
//! let config = contextgraph_config::Config::default(); // the built-in workspace provider
//! let engine = Engine::start(&config, std::path::Path::new(".")).await?;
//! let answer = engine
//!     .context(&ContextRequest { goal: "how is the config loaded?".into(), ..Default::default() })
//!     .await?;
//! print!("{}", answer.composition.prompt);
//! engine.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # What happens
//!
//! - [`Engine::start`] starts every enabled provider concurrently:
//!   built-ins (`workspace`, `docs`) in-process, stdio providers as child
//!   processes, HTTP providers with the bearer token read from the
//!   variable or file the configuration names. Each is handshaken within
//!   its own `timeout_ms`. A provider that fails to start does not stop
//!   the others: it is reported in every answer and status.
//! - The durable consent store is attached when it exists. Without it
//!   every egress provider is refused, as with it when no grant covers
//!   the provider's exact name and version (C1, C2, C6); such a provider
//!   is sent nothing, and its outcome says the exact `cgp consent grant`
//!   command to run.
//! - [`Engine::context`] asks every provider the same query (its budget is
//!   the whole prompt's, less the preamble) under one deadline, each
//!   provider cut off at its own timeout; the host audits every answer
//!   (B2, repairing what its policy allows unless `strict_audit`), and
//!   `contextgraph-compose` splits the budget by the configured
//!   weights, dedups, fences and audits every frame.
//! - Every provider is keyed by its `cgp.toml` name: its frames, consent,
//!   weights and reports go under that key, and the name it announced is
//!   shown beside it. Two providers announcing the same name (two `cgp
//!   serve docs` on different folders) are simply two keys.
#![warn(missing_docs)]

mod capped;
pub mod consent;
#[cfg(test)]
mod consent_needed_tests;
mod error;
mod fresh;
#[doc(hidden)]
pub mod fuzz;
mod request;
pub mod session;
mod start;
mod start_failure;
mod status;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use contextgraph_compose::{
    compose, Budget, Options, ProviderOutcome as ComposeOutcome, ProviderStatus as ComposeStatus,
    PREAMBLE,
};
use contextgraph_config::Config;
use contextgraph_host::consent::{ConsentLedger, ConsentStore};
use contextgraph_host::{
    AuditPolicy, ConsentDecision, ConsentRecord, Host, HostOptions, ProviderDescriptor,
};
use contextgraph_types::{token_cost_of_len, ContextQuery, Timestamp};
use tokio::time::Instant;

pub use consent::{
    grant_command, ledger_entries, revoke, shell_quote, store_path, ConsentNeeded, GrantRequest,
    LedgerEntry,
};
pub use contextgraph_provider_workspace::{BuildSnapshot, BuildStep, IndexBuild};
pub use error::EngineError;
pub use request::{
    ContextAnswer, ContextRequest, OutcomeStatus, ProviderOutcomeSummary, MAX_FRAMES,
};
pub use session::{Session, SessionTurn};
pub use status::{ConsentState, ProviderStatus};

/// How the engine runs, beyond the configuration.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Draw the workspace provider's indexing progress on stderr (a CLI on
    /// a terminal; never an MCP server, whose stdio is the protocol).
    pub progress: bool,
    /// Start only these configured providers (e.g. the one being granted
    /// consent); `None` starts every enabled provider.
    pub only: Option<Vec<String>>,
    /// Arguments appended to every `cgp consent grant` command the engine
    /// suggests, so it selects the same configuration (`--dir …`, `--config …`).
    pub grant_command_args: Vec<String>,
    /// Create the consent store when it does not exist yet, so that grants
    /// recorded while this engine runs are honoured without a restart (a
    /// long-running server wants this). Off by default: a one-shot command
    /// with nothing granted then writes nothing, and egress providers are
    /// refused either way.
    pub create_consent_store: bool,
    /// Watch in-process workspaces for changes and re-index them in the
    /// background (a long-running server wants this); every answer is
    /// preceded by a freshness check either way.
    pub watch: bool,
    /// Quarantine every faulty answer whole, repairing nothing, whatever
    /// `strict_audit` says in the configuration (`--strict-audit`).
    pub strict_audit: bool,
    /// Where in-process workspace providers report how far their index
    /// build is, and how it is cancelled: a server that answers while it
    /// starts (`cgp mcp`) tells its client from it.
    pub index_build: Option<IndexBuild>,
}

enum SlotState {
    Ready {
        descriptor: Arc<ProviderDescriptor>,
        handshake: Duration,
    },
    Failed {
        error: String,
    },
}

struct Slot {
    name: String,
    transport: String,
    timeout: Duration,
    weight: u32,
    state: SlotState,
}

/// Configured providers, started, behind one host.
pub struct Engine {
    host: Host,
    slots: Vec<Slot>,
    consent_path: Option<PathBuf>,
    budget: u32,
    safety_factor: f64,
    options: EngineOptions,
    host_options: HostOptions,
    warnings: Vec<String>,
    fresh: fresh::FreshWorkspaces,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field(
                "providers",
                &self.slots.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Start every enabled provider of `config` on `workspace`.
    pub async fn start(config: &Config, workspace: &Path) -> Result<Engine, EngineError> {
        Self::start_with(config, workspace, EngineOptions::default()).await
    }

    /// [`start`](Self::start) with options.
    pub async fn start_with(
        config: &Config,
        workspace: &Path,
        options: EngineOptions,
    ) -> Result<Engine, EngineError> {
        let chosen: Vec<_> = match &options.only {
            None => config
                .enabled_providers()
                .filter(|p| !start::skipped_builtin(p, workspace))
                .collect(),
            Some(names) => {
                for n in names {
                    if config.provider(n).is_none() {
                        return Err(EngineError::UnknownProvider {
                            name: n.clone(),
                            configured: config
                                .providers
                                .iter()
                                .map(|p| p.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                        });
                    }
                }
                config
                    .providers
                    .iter()
                    .filter(|p| names.contains(&p.name))
                    .collect()
            }
        };
        if chosen.is_empty() {
            return Err(EngineError::NoProviders);
        }
        let mut warnings = Vec::new();
        let (consent_path, store) = match consent::store_path(config) {
            // Opened only when it exists: a `cgp context` with nothing
            // granted writes nothing, and no store means default-deny.
            // Anything at the path (a directory, say) is opened too, so
            // that it is reported rather than silently taken as "no store".
            Ok(path) if options.create_consent_store || path.exists() => {
                match ConsentStore::open(&path) {
                    Ok(store) => (Some(path), Some(store)),
                    Err(e) => {
                        warnings.push(format!(
                            "{e}; egress providers are refused until it is usable"
                        ));
                        (Some(path), None)
                    }
                }
            }
            Ok(path) => (Some(path), None),
            Err(e) => {
                warnings.push(format!("{e}; egress providers are refused"));
                (None, None)
            }
        };
        let mut tasks = tokio::task::JoinSet::new();
        for (index, provider) in chosen.iter().enumerate() {
            let provider = (*provider).clone();
            let workspace = workspace.to_path_buf();
            let timeout = Duration::from_millis(config.timeout_ms_of(&provider));
            let progress = options.progress;
            let build = options.index_build.clone();
            tasks.spawn(async move {
                (
                    index,
                    start::start(&provider, &workspace, timeout, progress, build).await,
                )
            });
        }
        let mut results: Vec<Option<Result<start::Started, String>>> =
            chosen.iter().map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            if let Ok((index, result)) = joined {
                results[index] = Some(result);
            }
        }
        let mut host_options = HostOptions::default();
        host_options.audit = AuditPolicy::strict(options.strict_audit || config.strict_audit.value);
        let mut host = Host::new(host_options.clone());
        if let Some(store) = store {
            host = host.with_consent_store(store);
        }
        let mut slots = Vec::with_capacity(chosen.len());
        let mut fresh = fresh::FreshWorkspaces::default();
        for (provider, result) in chosen.iter().zip(results) {
            let timeout = Duration::from_millis(config.timeout_ms_of(provider));
            let state = match result {
                None => SlotState::Failed {
                    error: "the task starting it panicked".to_owned(),
                },
                Some(Err(error)) => SlotState::Failed { error },
                // Keyed by its configuration name, whatever it announced.
                Some(Ok(started)) => {
                    warnings.extend(started.notes);
                    match host.add_as(&provider.name, started.client, timeout).await {
                        Ok(descriptor) => {
                            if let Some(w) = started.workspace {
                                fresh.add(&provider.name, w, options.watch, &mut warnings);
                            }
                            SlotState::Ready {
                                descriptor,
                                handshake: started.handshake,
                            }
                        }
                        Err(e) => SlotState::Failed {
                            error: e.to_string(),
                        },
                    }
                }
            };
            slots.push(Slot {
                name: provider.name.clone(),
                transport: start::transport_of(&provider.kind),
                timeout,
                weight: provider.weight,
                state,
            });
        }
        Ok(Engine {
            host,
            slots,
            consent_path,
            budget: config.budget.value,
            safety_factor: config.safety_factor.value,
            options,
            host_options,
            warnings,
            fresh,
        })
    }

    /// The consent store file consulted (whether or not it exists yet).
    pub fn consent_store_path(&self) -> Option<&Path> {
        self.consent_path.as_deref()
    }

    /// The configured names of the providers this engine holds, in order.
    pub fn provider_names(&self) -> Vec<String> {
        self.slots.iter().map(|s| s.name.clone()).collect()
    }

    /// What `name` declared at its handshake, or why it did not start.
    pub fn descriptor(&self, name: &str) -> Result<Arc<ProviderDescriptor>, EngineError> {
        match self.slots.iter().find(|s| s.name == name) {
            None => Err(EngineError::UnknownProvider {
                name: name.to_owned(),
                configured: self.provider_names().join(", "),
            }),
            Some(Slot {
                state: SlotState::Ready { descriptor, .. },
                ..
            }) => Ok(Arc::clone(descriptor)),
            Some(Slot {
                state: SlotState::Failed { error },
                ..
            }) => Err(EngineError::ProviderUnavailable {
                name: name.to_owned(),
                error: error.clone(),
            }),
        }
    }

    /// The exact `cgp consent grant` command for `name` and `scopes`.
    pub fn grant_command(&self, name: &str, scopes: &[String]) -> String {
        consent::grant_command(name, scopes, &self.options.grant_command_args)
    }

    fn ledger(&self) -> (ConsentLedger, Vec<String>) {
        match self.host.consent_store() {
            None => (ConsentLedger::default(), Vec::new()),
            Some(store) => match store.load() {
                Ok(ledger) => {
                    let w = ledger.warnings.clone();
                    (ledger, w)
                }
                Err(e) => (
                    ConsentLedger::default(),
                    vec![format!("{e}; egress providers are refused")],
                ),
            },
        }
    }

    /// Record consent for `name` in the store (creating it if needed),
    /// pinned to the name and version it handshook with, and return the
    /// records written (the receipts).
    pub fn grant(
        &self,
        name: &str,
        request: &GrantRequest,
    ) -> Result<Vec<ConsentRecord>, EngineError> {
        let descriptor = self.descriptor(name)?;
        let records =
            consent::grant_records(name, &descriptor, request, &self.options.grant_command_args)?;
        let path = self
            .consent_path
            .clone()
            .ok_or(contextgraph_host::consent::ConsentStoreError::NoDataDir)?;
        let store = ConsentStore::open(path)?;
        // N14: a grant cannot take effect while a line that may concern
        // this provider (a revocation, say) cannot be read; refuse rather
        // than print a receipt the next check ignores.
        if let Some(line) = store.load()?.unreadable_line_for(&descriptor.id) {
            return Err(EngineError::Consent {
                name: name.to_owned(),
                message: format!(
                    "line {line} of the consent store {} cannot be read and may concern this provider \
                     (a revocation, say), so no grant can take effect until it is fixed or deleted; \
                     nothing was recorded",
                    store.path().display()
                ),
            });
        }
        for r in &records {
            store.append(r)?;
        }
        Ok(records)
    }

    /// The started egress providers the next [`context`](Self::context)
    /// would send nothing for want of consent (C1, C2, C6), in the order of
    /// [`provider_names`](Self::provider_names), each with what it declared and what a grant must cover — so a
    /// front end can ask the user before querying. No payload is sent.
    pub fn consent_needed(&self) -> Vec<ConsentNeeded> {
        let (ledger, _) = self.ledger();
        let now = Timestamp::now();
        self.slots
            .iter()
            .filter_map(|slot| {
                let SlotState::Ready { descriptor, .. } = &slot.state else {
                    return None;
                };
                let (reason, scopes) =
                    match contextgraph_host::consent::check(descriptor, &ledger, now) {
                        ConsentDecision::Allowed => return None,
                        ConsentDecision::ConsentRequired { reason, .. } => (reason, Vec::new()),
                        ConsentDecision::ScopeReceiptsMissing { scopes, .. } => (
                            format!(
                                "no live consent receipt for {}",
                                scopes
                                    .iter()
                                    .map(|s| s.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            scopes,
                        ),
                    };
                let names: Vec<String> = scopes.iter().map(|s| s.as_str().to_owned()).collect();
                Some(ConsentNeeded {
                    name: slot.name.clone(),
                    descriptor: Arc::clone(descriptor),
                    reason,
                    command: self.grant_command(&slot.name, &names),
                    scopes,
                })
            })
            .collect()
    }

    /// [`grant`](Self::grant), and make it count for this engine's next
    /// [`context`](Self::context): when the consent store did not exist at
    /// start (so none was attached, and every egress provider was refused),
    /// the store the grant created is attached now. The records are the same
    /// ones `cgp consent grant` writes, in the same store.
    pub fn grant_and_enable(
        &mut self,
        name: &str,
        request: &GrantRequest,
    ) -> Result<Vec<ConsentRecord>, EngineError> {
        let records = self.grant(name, request)?;
        if self.host.consent_store().is_none() {
            if let Some(path) = &self.consent_path {
                let store = ConsentStore::open(path)?;
                let host = std::mem::replace(&mut self.host, Host::new(self.host_options.clone()));
                self.host = host.with_consent_store(store);
            }
        }
        Ok(records)
    }

    /// Answer `request`: fan out, audit, compose.
    pub async fn context(&self, request: &ContextRequest) -> Result<ContextAnswer, EngineError> {
        if request.goal.trim().is_empty() {
            return Err(EngineError::BadRequest(
                "the goal is empty: say what the context is for, e.g. \"how is the config loaded?\"".to_owned(),
            ));
        }
        if request.max_frames == 0 || request.max_frames > MAX_FRAMES {
            return Err(EngineError::BadRequest(format!(
                "max_frames must be from 1 to {MAX_FRAMES}"
            )));
        }
        let budget = request.budget.unwrap_or_else(|| {
            let tokens = if request.budget_model_tokens == 0 {
                self.budget
            } else {
                request.budget_model_tokens
            };
            Budget::model_tokens_with_factor(
                tokens,
                request.safety_factor.unwrap_or(self.safety_factor),
            )
        });
        // The preamble is charged to the same budget, so providers are asked
        // only for what can still hold content; fences are charged at composition.
        let for_content = budget
            .in_budget_tokens()
            .saturating_sub(token_cost_of_len(PREAMBLE.len()));
        let mut query = ContextQuery::new(request.goal.clone(), request.max_frames, for_content);
        query.kinds = request.kinds.clone();
        query.anchors = request.anchors.clone();

        let ready: Vec<&Slot> = self
            .slots
            .iter()
            .filter(|s| matches!(s.state, SlotState::Ready { .. }))
            .collect();
        let timeout = ready.iter().map(|s| s.timeout).max().unwrap_or_default();
        // Answer from the files as they are now (see `fresh`).
        let stale = self.fresh.bring_up_to_date().await;
        let report = if ready.is_empty() {
            None
        } else {
            Some(self.host.query_all(&query, timeout).await)
        };
        let mut warnings = self.warnings.clone();
        warnings.extend(stale);
        if let Some(r) = &report {
            warnings.extend(r.warnings.iter().cloned());
        }
        let mut options = Options::new(budget).with_placement(request.placement);
        let mut outcomes: Vec<ComposeOutcome> = Vec::new();
        let mut summaries = Vec::with_capacity(self.slots.len());
        for slot in &self.slots {
            let grant = |scopes: &[String]| self.grant_command(&slot.name, scopes);
            match &slot.state {
                SlotState::Ready { descriptor, .. } => {
                    // The host keys it by its configuration name (A1: keys
                    // are unique, being the names of one table).
                    let Some(pr) = report.as_ref().and_then(|r| r.provider(&slot.name)) else {
                        continue;
                    };
                    let (outcome, mut summary) = request::map_outcome(
                        &slot.name,
                        &descriptor.info.name,
                        &pr.outcome,
                        &grant,
                    );
                    summary.timeout_ms = millis(slot.timeout);
                    summary.elapsed_ms = Some(millis(pr.elapsed));
                    options = options.with_weight(&slot.name, slot.weight);
                    outcomes.push(outcome);
                    summaries.push(summary);
                }
                SlotState::Failed { error } => {
                    let mut summary =
                        ProviderOutcomeSummary::new(&slot.name, None, OutcomeStatus::NotStarted);
                    summary.timeout_ms = millis(slot.timeout);
                    // Its lines kept (a provider's stderr reads as it was written).
                    summary.detail = Some(request::shorten_lines(error));
                    // It appears in the audit too, under its key.
                    outcomes.push(ComposeOutcome::without_frames(
                        slot.name.clone(),
                        ComposeStatus::Crashed {
                            detail: format!(
                                "did not start: {}",
                                request::shorten(&start_failure::one_line(error))
                            ),
                        },
                    ));
                    summaries.push(summary);
                }
            }
        }
        let composition = compose(&outcomes, &options)?;
        Ok(ContextAnswer {
            composition,
            providers: summaries,
            warnings,
            outcomes,
        })
    }

    /// Every provider's handshake, consent state and health. A provider
    /// that crashed since is restarted (within its respawn backoff) to
    /// check; no query payload is sent.
    pub async fn providers(&self) -> Vec<ProviderStatus> {
        let (ledger, _) = self.ledger();
        let mut out = Vec::with_capacity(self.slots.len());
        for slot in &self.slots {
            let grant = |scopes: &[String]| self.grant_command(&slot.name, scopes);
            let base = ProviderStatus {
                name: slot.name.clone(),
                provider_id: None,
                announced_name: None,
                version: None,
                transport: slot.transport.clone(),
                data_flow: None,
                capabilities: None,
                consent: ConsentState::Unknown,
                health: Err(String::new()),
                weight: slot.weight,
                timeout_ms: millis(slot.timeout),
            };
            let status = match &slot.state {
                SlotState::Failed { error } => ProviderStatus {
                    health: Err(request::shorten(&start_failure::one_line(error))),
                    ..base
                },
                SlotState::Ready {
                    descriptor,
                    handshake,
                } => {
                    let health = match self.host.client(&slot.name) {
                        None => Err("not held by the host".to_owned()),
                        Some(client) => match client.ready(Instant::now() + slot.timeout).await {
                            Ok(_) => Ok(*handshake),
                            Err(e) => Err(request::shorten(&e.to_string())),
                        },
                    };
                    ProviderStatus {
                        provider_id: Some(descriptor.id.clone()),
                        announced_name: Some(descriptor.info.name.clone()),
                        version: Some(descriptor.info.version.clone()),
                        data_flow: Some(descriptor.info.data_flow.clone()),
                        capabilities: Some(descriptor.capabilities.clone()),
                        consent: status::consent_state(descriptor, &ledger, &grant),
                        health,
                        ..base
                    }
                }
            };
            out.push(status);
        }
        out
    }

    /// Shut every provider down (R2).
    pub async fn shutdown(self) {
        self.host.shutdown().await;
    }

    /// [`shutdown`](Self::shutdown) for a process about to exit (a one-shot
    /// `cgp context`): the providers are shut down all the same, watchers
    /// stopped, but the in-process workspace indexes are not taken apart
    /// piece by piece. Freeing a large index (hundreds of thousands of
    /// records and tables) was about a tenth of a warm run's CPU time, spent
    /// only to hand memory back that the exit returns whole. Nothing is
    /// written on the way out either way: an index is persisted by the
    /// refresh that changed it, never at drop.
    pub async fn shutdown_for_exit(self) {
        self.host.shutdown().await;
        let Engine { fresh, .. } = self;
        fresh.leave_to_exit();
    }
}

/// `d` in whole milliseconds, saturating.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
