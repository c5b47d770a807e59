//! `cgp bridge mcp -- <command> [args…]`: an MCP server's resources as a CGP
//! provider.
//!
//! [`McpBridge::connect`] spawns the MCP server, completes `initialize`, and
//! returns a [`Provider`] the SDK runner serves over stdio. For each query
//! the bridge:
//!
//! 1. lists the server's resources (at most
//!    [`BridgeOptions::max_listed`], paginated);
//! 2. ranks them against the goal by metadata (name, title, description,
//!    URI; anchors first) and reads the best [`BridgeOptions::max_reads`],
//!    a few at a time, skipping binary ones and those over
//!    [`BridgeOptions::max_resource_bytes`];
//! 3. builds one frame per resource: kind `snippet` for code and structured
//!    data by MIME type, `doc` otherwise; id and `uri` = the resource URI;
//!    `token_cost` and `content_digest` computed from the content (B3, D1);
//!    an `mcp_resource` provenance entry with the resource URI and the
//!    SHA-256 of the content, plus a `file` entry (F5) only when the URI is
//!    a local file whose bytes on disk are exactly the content;
//! 4. scores by goal-term coverage of metadata and content, anchored
//!    resources above the rest, and packs with the SDK's [`pack`](fn@pack) (B1, B4,
//!    Q1, truthful `truncated`).
//!
//! `verify` reads each presented resource again: `valid` when the content
//! still hashes to the presented digest, `stale` with the new digest when
//! it does not, `gone` when the server says the resource does not exist,
//! `unknown` when it cannot tell (timeout, crash, no digest presented).
//!
//! The data flow is declared from [`BridgeOptions`], because only the person
//! configuring the bridge knows where the MCP server sends data: by default
//! `egress: false`, scope `local-only`.
//!
//! Every MCP call has a timeout, each query a total deadline; a server that
//! crashes or hangs turns into a provider `error` (`internal` or
//! `unavailable`), never a panic or a hang.

mod client;
pub mod frames;
pub mod rank;

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use contextgraph_provider_sdk::{pack, sha256_digest, Provider, ProviderError};
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, DataFlow, EgressScope, FrameKind,
    FrameVerdict, ProviderInfo, QueryCapability, Timestamp, Verdict, VerifyRequest, VerifyResponse,
};
use rmcp::model::Resource;
use rmcp::service::{Peer, RoleClient};
use tokio::sync::Semaphore;

use client::{list_resources, read_resource, McpClient};
pub use client::{CallError, ServerIdentity};
use frames::{recorded_at, resource_frame, resource_text, ResourceText};

/// Limits and declarations of one bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeOptions {
    /// Provider name (the id hosts key frames and consent on). Default:
    /// `mcp-<server name>`.
    pub name: Option<String>,
    /// Whether the MCP server sends data off this machine. The bridge cannot
    /// know; the person configuring it declares it (C3). Default `false`.
    pub egress: bool,
    /// Where data goes. Default: `local-only` when `egress` is false, none
    /// (the boolean contract) when it is true.
    pub egress_scopes: Vec<EgressScope>,
    /// Most resources taken from the listing (default 1000).
    pub max_listed: usize,
    /// Most listing pages requested (default 50).
    pub max_pages: usize,
    /// Most resources read per query (default 32).
    pub max_reads: usize,
    /// Largest resource content accepted, in bytes (default 1 MiB).
    pub max_resource_bytes: usize,
    /// Reads in flight at once (default 4).
    pub read_concurrency: usize,
    /// Most identities re-read per `verify` (default 64; the rest are `unknown`).
    pub max_verify: usize,
    /// Timeout of each MCP call (default 10 s).
    pub call_timeout: Duration,
    /// Total time one query or verify may take (default 30 s).
    pub request_deadline: Duration,
    /// Time allowed for spawning the server and `initialize` (default 20 s).
    pub init_timeout: Duration,
}

impl Default for BridgeOptions {
    fn default() -> Self {
        BridgeOptions {
            name: None,
            egress: false,
            egress_scopes: Vec::new(),
            max_listed: 1000,
            max_pages: 50,
            max_reads: 32,
            max_resource_bytes: 1024 * 1024,
            read_concurrency: 4,
            max_verify: 64,
            call_timeout: Duration::from_secs(10),
            request_deadline: Duration::from_secs(30),
            init_timeout: Duration::from_secs(20),
        }
    }
}

/// Why a bridge could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// The MCP server command could not be started.
    #[error("cannot start MCP server `{command}`: {detail}; check the command and its PATH")]
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        detail: String,
    },
    /// The server did not complete `initialize`.
    #[error("MCP server `{command}` did not complete initialization: {detail}; run it by hand to see its stderr")]
    Initialize {
        /// The command.
        command: String,
        /// What happened.
        detail: String,
    },
    /// The declared data flow contradicts itself (C5) or names an invalid scope.
    #[error("the bridge's data flow is inconsistent (C5): {0}")]
    DataFlow(String),
    /// The runtime thread could not start.
    #[error("cannot start the bridge runtime: {0}")]
    Runtime(String),
}

/// An MCP server's resources as a CGP [`Provider`].
pub struct McpBridge {
    client: McpClient,
    info: ProviderInfo,
    command: String,
    options: Arc<BridgeOptions>,
}

/// One read resource, before packing.
struct Candidate {
    resource: Resource,
    outcome: Result<ResourceText, CallError>,
}

impl McpBridge {
    /// Spawn `command args…` as an MCP server and bridge it.
    pub fn connect(
        command: impl Into<OsString>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
        options: BridgeOptions,
    ) -> Result<Self, BridgeError> {
        let data_flow = data_flow(&options)?;
        let command = command.into();
        let label = command.to_string_lossy().into_owned();
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let client = McpClient::spawn(command, args, options.init_timeout)?;
        let server = client.server().clone();
        let name = options
            .name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| default_name(&server.name));
        let version = if server.version.trim().is_empty() {
            "unknown".to_owned()
        } else {
            server.version.clone()
        };
        Ok(McpBridge {
            client,
            info: ProviderInfo {
                name,
                version,
                data_flow,
            },
            command: label,
            options: Arc::new(options),
        })
    }

    /// The MCP server's own identity.
    pub fn server(&self) -> &ServerIdentity {
        self.client.server()
    }

    fn crashed(&self, what: &str, e: &CallError) -> ProviderError {
        match e {
            CallError::Timeout(_) => ProviderError::unavailable(format!(
                "{}: MCP server `{}` did not answer {what} in time ({e}); it may be overloaded, retry later",
                self.info.name, self.command
            )),
            _ => ProviderError::internal(format!(
                "{}: MCP server `{}` failed during {what}: {e}; see its stderr, then restart `cgp bridge mcp`",
                self.info.name, self.command
            )),
        }
    }
}

/// `mcp-<server name>`, lowercased, with anything outside `[a-z0-9._-]`
/// replaced by `-`.
fn default_name(server_name: &str) -> String {
    let cleaned: String = server_name
        .trim()
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "mcp-bridge".to_owned()
    } else {
        format!("mcp-{cleaned}")
    }
}

/// The declared data flow: `reads` (queries are seen), no `writes`,
/// `egress` as configured, checked for consistency (C5).
fn data_flow(options: &BridgeOptions) -> Result<DataFlow, BridgeError> {
    let egress_scopes = if options.egress_scopes.is_empty() && !options.egress {
        vec![EgressScope::LocalOnly]
    } else {
        options.egress_scopes.clone()
    };
    let flow = DataFlow {
        reads: true,
        writes: false,
        egress: options.egress,
        egress_scopes,
    };
    if let Some(bad) = flow.egress_scopes.iter().find(|s| !s.is_valid()) {
        return Err(BridgeError::DataFlow(format!(
            "scope {bad:?} is neither a base scope (local-only, org-tenant, third-party-index, third-party-model) nor vendor:name"
        )));
    }
    if !flow.scopes_consistent() {
        let off: Vec<&str> = flow.off_machine_scopes().map(EgressScope::as_str).collect();
        return Err(BridgeError::DataFlow(format!(
            "off-machine scopes {} are declared with egress false; pass --egress too, or drop the scopes",
            off.join(", ")
        )));
    }
    Ok(flow)
}

impl Provider for McpBridge {
    fn info(&self) -> ProviderInfo {
        self.info.clone()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Doc, FrameKind::Snippet],
            },
            correlation: true,
            verify: true,
            ..Capabilities::default()
        }
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let read_at = Timestamp::now();
        let wants = |k: FrameKind| query.kinds.is_empty() || query.kinds.contains(&k);
        if !wants(FrameKind::Doc) && !wants(FrameKind::Snippet) {
            // Q1: none of the requested kinds is served; nothing to read.
            return Ok(ContextQueryResult {
                frames: Vec::new(),
                truncated: false,
                dropped_estimate: None,
            });
        }
        let mut text = query.goal.clone();
        if let Some(q) = &query.query_text {
            text.push(' ');
            text.push_str(q);
        }
        let terms = rank::terms(&text);
        let anchors = query.anchors.clone();
        let options = Arc::clone(&self.options);
        let peer = self.client.peer();
        let job_terms = terms.clone();
        let job_anchors = anchors.clone();
        let candidates = self
            .client
            .run(
                gather(peer, options, job_terms, job_anchors),
                self.options.request_deadline,
            )
            .map_err(|e| self.crashed("a query", &e))?;

        let server_name = if self.server().name.is_empty() {
            self.info.name.clone()
        } else {
            self.server().name.clone()
        };
        let read = candidates.len();
        let mut frames: Vec<ContextFrame> = Vec::with_capacity(read);
        let mut failures = Vec::new();
        for c in candidates {
            match c.outcome {
                Ok(ResourceText::Text { text, mime }) => {
                    let is_anchored = rank::anchored(&c.resource.uri, &anchors);
                    let meta = rank::metadata_score(&c.resource, &terms);
                    let content = rank::content_score(&text, &terms);
                    if !is_anchored && !terms.is_empty() && meta == 0.0 && content == 0.0 {
                        continue; // matches no goal term: not evidence for this goal
                    }
                    let score = rank::score(meta, content, is_anchored);
                    let recorded = recorded_at(&c.resource, read_at);
                    frames.push(resource_frame(
                        &c.resource,
                        &text,
                        mime.as_deref(),
                        score,
                        &server_name,
                        recorded,
                    ));
                }
                Ok(ResourceText::Binary) | Ok(ResourceText::TooLarge { .. }) => {}
                Err(e) => failures.push((c.resource.uri, e)),
            }
        }
        // Every read failed: that is the server failing, not a lack of
        // evidence (a crash is `internal`, silence `unavailable`).
        if frames.is_empty() && !failures.is_empty() && failures.len() == read {
            let (uri, e) = failures
                .iter()
                .find(|(_, e)| *e == CallError::Closed)
                .unwrap_or(&failures[0]);
            return Err(self.crashed(&format!("reading {uri}"), e));
        }
        for (uri, e) in &failures {
            let _ = writeln_stderr(&format!("{}: skipped resource {uri}: {e}", self.info.name));
        }
        Ok(pack(frames, query))
    }

    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        let mut to_read: Vec<(usize, String, String)> = Vec::new();
        for (i, id) in request.frames.iter().enumerate() {
            if to_read.len() == self.options.max_verify {
                break;
            }
            if id.provider_id != self.info.name {
                continue;
            }
            if let Some(digest) = &id.content_digest {
                to_read.push((i, id.frame_id.clone(), digest.clone()));
            }
        }
        let peer = self.client.peer();
        let options = Arc::clone(&self.options);
        let uris: Vec<String> = to_read.iter().map(|(_, uri, _)| uri.clone()).collect();
        let reads = self
            .client
            .run(reread(peer, options, uris), self.options.request_deadline)
            .unwrap_or_default();
        let verdicts = to_read
            .iter()
            .zip(
                reads
                    .into_iter()
                    .map(Some)
                    .chain(std::iter::repeat_with(|| None)),
            )
            .map(|((i, _, presented), read)| {
                let verdict = match read {
                    Some(Ok(ResourceText::Text { text, .. })) => {
                        let now = sha256_digest(text.as_bytes());
                        if &now == presented {
                            Verdict::Valid
                        } else {
                            Verdict::Stale {
                                replacement_digest: Some(now),
                            }
                        }
                    }
                    // It exists but is no longer servable as text: what was
                    // served is not what the server holds now.
                    Some(Ok(ResourceText::Binary)) | Some(Ok(ResourceText::TooLarge { .. })) => {
                        Verdict::Stale {
                            replacement_digest: None,
                        }
                    }
                    Some(Err(CallError::NotFound)) => Verdict::Gone,
                    Some(Err(_)) | None => Verdict::Unknown,
                };
                FrameVerdict {
                    frame: request.frames[*i].clone(),
                    verdict,
                }
            })
            .collect();
        // The runner completes the answer (V2): identities not answered here
        // (foreign, digest-less, beyond max_verify) become `unknown`.
        VerifyResponse { verdicts }
    }
}

fn writeln_stderr(line: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    writeln!(std::io::stderr(), "{line}")
}

/// List, pick and read the resources for one query (runs on the bridge runtime).
async fn gather(
    peer: Peer<RoleClient>,
    options: Arc<BridgeOptions>,
    terms: Vec<String>,
    anchors: Vec<String>,
) -> Result<Vec<Candidate>, CallError> {
    let (listing, _cut) = list_resources(
        &peer,
        options.max_listed,
        options.max_pages,
        options.call_timeout,
    )
    .await?;
    let max_bytes = options.max_resource_bytes as u64;
    let readable: Vec<Resource> = listing
        .into_iter()
        .filter(|r| r.size.is_none_or(|s| s <= max_bytes))
        .collect();
    let picked = rank::pick(&readable, &terms, &anchors, options.max_reads);
    let uris: Vec<String> = picked.iter().map(|&i| readable[i].uri.clone()).collect();
    let reads = read_all(&peer, &options, uris).await;
    let mut slots: Vec<Option<Resource>> = readable.into_iter().map(Some).collect();
    Ok(picked
        .into_iter()
        .zip(reads)
        .filter_map(|(i, outcome)| {
            slots[i]
                .take()
                .map(|resource| Candidate { resource, outcome })
        })
        .collect())
}

/// Read `uris` again for `verify` (runs on the bridge runtime).
async fn reread(
    peer: Peer<RoleClient>,
    options: Arc<BridgeOptions>,
    uris: Vec<String>,
) -> Result<Vec<Result<ResourceText, CallError>>, CallError> {
    Ok(read_all(&peer, &options, uris).await)
}

/// Read every URI, at most `read_concurrency` at a time, each within the
/// call timeout; results in the order of `uris`.
async fn read_all(
    peer: &Peer<RoleClient>,
    options: &Arc<BridgeOptions>,
    uris: Vec<String>,
) -> Vec<Result<ResourceText, CallError>> {
    let gate = Arc::new(Semaphore::new(options.read_concurrency.max(1)));
    let mut tasks = Vec::with_capacity(uris.len());
    for uri in uris {
        let peer = peer.clone();
        let gate = Arc::clone(&gate);
        let timeout = options.call_timeout;
        let max_bytes = options.max_resource_bytes;
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire().await.map_err(|_| CallError::Closed)?;
            let contents = read_resource(&peer, &uri, timeout).await?;
            Ok(resource_text(&contents, max_bytes))
        }));
    }
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        out.push(match task.await {
            Ok(result) => result,
            Err(e) => Err(CallError::Other(format!("read task failed: {e}"))),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c5_off_machine_scope_without_egress_is_refused() {
        let options = BridgeOptions {
            egress_scopes: vec![EgressScope::ThirdPartyIndex],
            ..BridgeOptions::default()
        };
        let e = data_flow(&options).unwrap_err();
        assert!(e.to_string().contains("third-party-index"), "{e}");
    }

    #[test]
    fn default_data_flow_is_local_only_without_egress() {
        let flow = data_flow(&BridgeOptions::default()).unwrap();
        assert!(!flow.egress && flow.reads && !flow.writes);
        assert_eq!(flow.egress_scopes, vec![EgressScope::LocalOnly]);
    }

    #[test]
    fn declared_egress_keeps_its_scopes() {
        let options = BridgeOptions {
            egress: true,
            egress_scopes: vec![EgressScope::ThirdPartyModel],
            ..BridgeOptions::default()
        };
        let flow = data_flow(&options).unwrap();
        assert!(flow.egress);
        assert_eq!(flow.egress_scopes, vec![EgressScope::ThirdPartyModel]);
    }

    #[test]
    fn invalid_custom_scope_is_refused() {
        let options = BridgeOptions {
            egress: true,
            egress_scopes: vec![EgressScope::from_wire("nowhere")],
            ..BridgeOptions::default()
        };
        assert!(data_flow(&options).is_err());
    }

    #[test]
    fn default_name_is_sanitized() {
        assert_eq!(default_name("My Notes/Server"), "mcp-my-notes-server");
        assert_eq!(default_name("  "), "mcp-bridge");
    }
}
