//! Turning one configured provider into a connected [`ProviderClient`].
//!
//! Built-ins run in-process (indexing on a blocking thread); stdio
//! providers are spawned with a scrubbed environment; HTTP providers get
//! their bearer token from the variable or file the configuration names,
//! never from the configuration itself (C8).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use contextgraph_config::{ProviderConfig, ProviderKind};
use contextgraph_host::{
    BearerToken, HttpConfig, HttpProviderClient, InProcessProvider, ProviderClient, StdioCommand,
    StdioOptions, StdioProvider,
};
use contextgraph_provider_docs::{DocsConfig, DocsProvider};
use contextgraph_provider_history::{HistoryOptions, HistoryProvider};
use contextgraph_provider_workspace::{IndexBuild, WorkspaceOptions, WorkspaceProvider};
use tokio::time::Instant;

use crate::capped::Capped;

/// A provider that started: its client (already handshaken; the host
/// keys what it declared when it is added).
pub(crate) struct Started {
    pub client: Arc<dyn ProviderClient>,
    pub handshake: Duration,
    /// The in-process workspace provider behind `client`, kept so the
    /// engine can bring its index up to date before each answer.
    pub workspace: Option<WorkspaceProvider>,
    /// What a person should know about what it can answer (a shallow
    /// clone's history, say), shown with the answer's warnings.
    pub notes: Vec<String>,
}

/// Whether `provider` is the implicit history provider on a directory that
/// is no git working tree: then it is not started at all (it has nothing
/// to serve, and saying so on every run would be noise). A history provider
/// a file configures is started, and fails loudly, wherever it points.
pub(crate) fn skipped_builtin(provider: &ProviderConfig, workspace: &Path) -> bool {
    match &provider.kind {
        ProviderKind::History { dir }
            if provider.origin == contextgraph_config::Origin::Default =>
        {
            contextgraph_provider_history::working_tree_of(dir.as_deref().unwrap_or(workspace))
                .is_none()
        }
        _ => false,
    }
}

/// How a configured provider is reached, for people (never a token).
pub(crate) fn transport_of(kind: &ProviderKind) -> String {
    match kind {
        ProviderKind::Workspace { .. }
        | ProviderKind::History { .. }
        | ProviderKind::Docs { .. } => "in-process".to_owned(),
        ProviderKind::Stdio { command, .. } => format!("stdio ({})", command.display()),
        ProviderKind::Http { url, .. } => format!("http ({url})"),
    }
}

/// Start `provider` and handshake it within `timeout` (built-ins index
/// first; indexing is local and bounded by the walk's own limits).
pub(crate) async fn start(
    provider: &ProviderConfig,
    workspace: &Path,
    timeout: Duration,
    progress: bool,
    build: Option<IndexBuild>,
) -> Result<Started, String> {
    let mut workspace_handle = None;
    let mut notes = Vec::new();
    let client: Arc<dyn ProviderClient> = match &provider.kind {
        ProviderKind::Workspace { dir } => {
            let dir = dir.clone().unwrap_or_else(|| workspace.to_path_buf());
            // The ranking switches of the environment (CGP_RANK_SIGNALS_OFF,
            // CGP_RANK_SIGNALS_ON, CGP_SEMANTIC), as `cgp serve workspace`
            // reads them: a signal's worth is measurable with `cgp context`.
            let options = WorkspaceOptions {
                progress,
                build,
                ..WorkspaceOptions::default()
            }
            .with_ranking_from_env()
            .map_err(|e| format!("cannot open the workspace: {e}"))?;
            if progress {
                // An ablation left set by accident is seen on stderr.
                if let Some(note) = contextgraph_provider_workspace::serve::ranking_note(&options) {
                    eprintln!("{}: {note}", contextgraph_provider_workspace::PROVIDER_NAME);
                }
            }
            let opened = blocking(move || {
                WorkspaceProvider::open(&dir, options)
                    .map(|(p, _)| p)
                    .map_err(|e| format!("cannot index the workspace {}: {e}", dir.display()))
            })
            .await?;
            workspace_handle = Some(opened.clone());
            Arc::new(InProcessProvider::new(opened).map_err(|e| e.to_string())?)
        }
        ProviderKind::History { dir } => {
            let dir = dir.clone().unwrap_or_else(|| workspace.to_path_buf());
            let opened = blocking(move || {
                HistoryProvider::open(&dir, HistoryOptions::default())
                    .map_err(|e| format!("cannot index the history of {}: {e}", dir.display()))
            })
            .await?;
            notes = opened.notes();
            Arc::new(InProcessProvider::new(opened).map_err(|e| e.to_string())?)
        }
        ProviderKind::Docs { dir } => {
            let dir: PathBuf = dir.clone();
            let opened = blocking(move || {
                DocsProvider::open(DocsConfig::new(&dir))
                    .map_err(|e| format!("cannot read the docs folder {}: {e}", dir.display()))
            })
            .await?;
            Arc::new(InProcessProvider::new(opened).map_err(|e| e.to_string())?)
        }
        ProviderKind::Stdio {
            command,
            args,
            env,
            pass_env,
            cwd,
        } => {
            let mut cmd = StdioCommand::new(command).args(args);
            for name in pass_env {
                cmd = cmd.allow_env(name);
            }
            for (k, v) in env {
                cmd = cmd.env(k, v);
            }
            cmd.current_dir = cwd.clone();
            let mut options = StdioOptions::default();
            options.connection.handshake_timeout = timeout;
            Arc::new(StdioProvider::new(cmd, options))
        }
        ProviderKind::Http { url, token } => {
            let mut config = HttpConfig::new(url.clone());
            config.request_timeout = timeout;
            config.connect_timeout = timeout.min(Duration::from_secs(5));
            if let Some(source) = token {
                let secret = source.read(&provider.name).map_err(|e| e.to_string())?;
                config.bearer = Some(
                    BearerToken::new(&secret)
                        .map_err(|e| format!("provider `{}`: {e}", provider.name))?,
                );
            }
            Arc::new(HttpProviderClient::new(config).map_err(|e| e.to_string())?)
        }
    };
    let client: Arc<dyn ProviderClient> = Arc::new(Capped::new(client, timeout));
    let began = Instant::now();
    match client.ready(began + timeout).await {
        Ok(_) => Ok(Started {
            client,
            handshake: began.elapsed(),
            workspace: workspace_handle,
            notes,
        }),
        Err(e) => {
            client.shutdown().await;
            Err(match &provider.kind {
                ProviderKind::Stdio {
                    command, args, cwd, ..
                } => crate::start_failure::describe(&e, command, args, cwd.as_deref()),
                // One shard of many being down is routine: say what to
                // check, and that the others answer without it.
                ProviderKind::Http { .. } => format!(
                    "{e}; it is left out of every answer until it is reachable: check that \
                     its server runs (`GET /healthz` answers 200 when it is ready), or set \
                     enabled = false for it in cgp.toml"
                ),
                _ => e.to_string(),
            })
        }
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(format!("the provider panicked while starting: {e}")))
}
