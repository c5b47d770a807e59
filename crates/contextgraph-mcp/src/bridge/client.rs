//! The MCP client half of the bridge: a child-process MCP session on a
//! runtime thread of its own, driven from the synchronous provider SDK.
//!
//! The SDK calls `Provider::query` on its own worker threads, which are not
//! async. Every MCP call is therefore spawned onto the bridge's runtime and
//! its result awaited over a std channel with a deadline; nothing here calls
//! `block_on` from a thread that might already be inside a runtime, so the
//! bridge cannot panic whichever thread calls it. The runtime is owned by a
//! dedicated thread, so dropping the bridge from any context is safe.

use std::ffi::OsString;
use std::future::Future;
use std::process::Stdio;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ErrorCode, Implementation, PaginatedRequestParams,
    ReadResourceRequestParams, Resource, ResourceContents,
};
use rmcp::service::{Peer, RoleClient, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use tokio::sync::oneshot;

use super::BridgeError;
use contextgraph_types::display_text::bounded;

/// Why one MCP call produced nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No answer within the deadline.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The server exited or closed its pipe.
    #[error("the MCP server exited or closed its pipe")]
    Closed,
    /// The server answered `resources/read` with "resource not found".
    #[error("resource not found")]
    NotFound,
    /// The server answered with another JSON-RPC error.
    #[error("the MCP server answered with error {code}: {message}")]
    Mcp {
        /// JSON-RPC error code.
        code: i32,
        /// Its message, clipped.
        message: String,
    },
    /// Anything else the client library reported.
    #[error("{0}")]
    Other(String),
}

impl From<ServiceError> for CallError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::McpError(data) if data.code == ErrorCode::RESOURCE_NOT_FOUND => {
                CallError::NotFound
            }
            ServiceError::McpError(data) => CallError::Mcp {
                code: data.code.0,
                message: bounded(&data.message, 300),
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => CallError::Closed,
            ServiceError::Timeout { timeout } => CallError::Timeout(timeout),
            other => CallError::Other(bounded(&other.to_string(), 300)),
        }
    }
}

/// Who the MCP server said it is at `initialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
}

/// A live MCP session with a child process.
pub(crate) struct McpClient {
    handle: tokio::runtime::Handle,
    peer: Peer<RoleClient>,
    server: ServerIdentity,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

type Ready = Result<(tokio::runtime::Handle, Peer<RoleClient>, ServerIdentity), BridgeError>;

impl McpClient {
    /// Spawn `command args…` and complete the MCP `initialize` exchange
    /// within `init_timeout`. The child's stderr is passed through to ours
    /// (diagnostics), its stdout is the MCP channel.
    pub(crate) fn spawn(
        command: OsString,
        args: Vec<OsString>,
        init_timeout: Duration,
    ) -> Result<Self, BridgeError> {
        let label = command.to_string_lossy().into_owned();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Ready>(1);
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let thread = thread::Builder::new()
            .name("cgp-mcp-bridge".to_owned())
            .spawn(move || session_thread(command, args, init_timeout, ready_tx, shutdown_rx))
            .map_err(|e| BridgeError::Runtime(e.to_string()))?;
        // The thread answers within init_timeout (plus spawn time); a little
        // slack covers a slow machine without ever waiting forever.
        let ready = ready_rx
            .recv_timeout(init_timeout + Duration::from_secs(5))
            .map_err(|_| BridgeError::Initialize {
                command: label.clone(),
                detail: format!("no answer to `initialize` within {init_timeout:?}"),
            })?;
        let (handle, peer, server) = ready?;
        Ok(McpClient {
            handle,
            peer,
            server,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        })
    }

    /// The server's identity.
    pub(crate) fn server(&self) -> &ServerIdentity {
        &self.server
    }

    /// A handle on the session, for building async jobs.
    pub(crate) fn peer(&self) -> Peer<RoleClient> {
        self.peer.clone()
    }

    /// Run `job` on the bridge runtime and wait for it at most `deadline`.
    /// Safe from any thread: this blocks the caller on a std channel, never
    /// on the runtime.
    pub(crate) fn run<T, F>(&self, job: F, deadline: Duration) -> Result<T, CallError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, CallError>> + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel(1);
        let task = self.handle.spawn(async move {
            let outcome = match tokio::time::timeout(deadline, job).await {
                Ok(result) => result,
                Err(_) => Err(CallError::Timeout(deadline)),
            };
            let _ = tx.send(outcome);
        });
        match rx.recv_timeout(deadline + Duration::from_secs(2)) {
            Ok(outcome) => outcome,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                task.abort();
                Err(CallError::Timeout(deadline))
            }
            // The runtime is gone (bridge shutting down): the session is over.
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(CallError::Closed),
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            // The session thread closes the child within a bounded time; if
            // it is somehow stuck, do not hang the provider's exit on it.
            let (done_tx, done_rx) = mpsc::channel();
            let _ = thread::Builder::new().spawn(move || {
                let _ = thread.join();
                let _ = done_tx.send(());
            });
            let _ = done_rx.recv_timeout(Duration::from_secs(5));
        }
    }
}

fn session_thread(
    command: OsString,
    args: Vec<OsString>,
    init_timeout: Duration,
    ready: mpsc::SyncSender<Ready>,
    shutdown: oneshot::Receiver<()>,
) {
    let label = command.to_string_lossy().into_owned();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(BridgeError::Runtime(e.to_string())));
            return;
        }
    };
    runtime.block_on(async move {
        let mut cmd = tokio::process::Command::new(&command);
        cmd.args(&args).kill_on_drop(true);
        let transport = match TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()
        {
            Ok((transport, _stderr)) => transport,
            Err(e) => {
                let _ = ready.send(Err(BridgeError::Spawn {
                    command: label,
                    detail: e.to_string(),
                }));
                return;
            }
        };
        let client_config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("cgp-bridge", env!("CARGO_PKG_VERSION")),
        );
        let running = match tokio::time::timeout(init_timeout, client_config.serve(transport)).await
        {
            Ok(Ok(running)) => running,
            Ok(Err(e)) => {
                let _ = ready.send(Err(BridgeError::Initialize {
                    command: label,
                    detail: bounded(&e.to_string(), 300),
                }));
                return;
            }
            Err(_) => {
                let _ = ready.send(Err(BridgeError::Initialize {
                    command: label,
                    detail: format!("no answer to `initialize` within {init_timeout:?}"),
                }));
                return;
            }
        };
        let server = running
            .peer_info()
            .and_then(|info| info.server_info.clone())
            .map(|i| ServerIdentity {
                name: i.name,
                version: i.version,
            })
            .unwrap_or_else(|| ServerIdentity {
                name: String::new(),
                version: String::new(),
            });
        let peer = running.peer().clone();
        if ready
            .send(Ok((tokio::runtime::Handle::current(), peer, server)))
            .is_err()
        {
            return;
        }
        // Serve jobs until the bridge is dropped, then close the session
        // (which closes the child's stdin and kills it if it lingers).
        let _ = shutdown.await;
        let _ = tokio::time::timeout(Duration::from_secs(3), running.cancel()).await;
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
}

/// List resources page by page, at most `max` of them (duplicate URIs
/// dropped) and at most `max_pages` pages, each page within `call_timeout`.
/// Returns the resources and whether the listing was cut short.
pub(crate) async fn list_resources(
    peer: &Peer<RoleClient>,
    max: usize,
    max_pages: usize,
    call_timeout: Duration,
) -> Result<(Vec<Resource>, bool), CallError> {
    let mut out: Vec<Resource> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..max_pages {
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let page = tokio::time::timeout(call_timeout, peer.list_resources(Some(params)))
            .await
            .map_err(|_| CallError::Timeout(call_timeout))??;
        for r in page.resources {
            if r.uri.is_empty() || !seen.insert(r.uri.clone()) {
                continue;
            }
            if out.len() == max {
                return Ok((out, true));
            }
            out.push(r);
        }
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok((out, false)),
        }
    }
    Ok((out, true))
}

/// Read one resource within `call_timeout`.
pub(crate) async fn read_resource(
    peer: &Peer<RoleClient>,
    uri: &str,
    call_timeout: Duration,
) -> Result<Vec<ResourceContents>, CallError> {
    let read = peer.read_resource(ReadResourceRequestParams::new(uri));
    let result = tokio::time::timeout(call_timeout, read)
        .await
        .map_err(|_| CallError::Timeout(call_timeout))??;
    Ok(result.contents)
}
