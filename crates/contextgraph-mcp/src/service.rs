//! The seam between the MCP server and whatever produces context:
//! [`ContextService`], with the request and reply types the tools exchange.
//!
//! The server never talks to a host or a provider itself. `cgp mcp` plugs
//! the real engine (configuration → host → composition) in behind this
//! trait, and tests plug a fake in, so the MCP side (argument validation,
//! result-size caps, error reporting) is tested without spawning providers.

use std::future::Future;

use contextgraph_compose::{Citation, OutcomeAudit, ProviderAudit};
use contextgraph_types::FrameKind;
use serde::{Deserialize, Serialize};

/// One validated `get_context` call, as the service receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextToolRequest {
    /// What the agent is trying to do (non-empty).
    pub goal: String,
    /// Budget for the whole prompt block, in model tokens, already capped so
    /// that the tool result fits the MCP client's result-size limit.
    pub budget: u32,
    /// Kinds to ask for; empty means any kind.
    pub kinds: Vec<FrameKind>,
    /// Focal resources (URIs or workspace paths) that bias relevance.
    pub anchors: Vec<String>,
    /// Start the session over before this turn: every frame is sent in full,
    /// as to a model that holds nothing (after its client compacted or
    /// cleared the conversation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
    /// The session this call is a turn of ([`crate::session::session_key`]):
    /// the service answers relative to what that session's model already
    /// holds and stages the turn, which the server then commits with
    /// [`ContextService::commit_session`]. `None`: an independent call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// What the service composed for one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextToolReply {
    /// The fenced prompt block (empty when no frame fitted).
    pub prompt: String,
    /// One entry per fenced block, in prompt order.
    pub frames: Vec<FrameEntry>,
    /// What each provider contributed, including those that contributed
    /// nothing and why.
    pub providers: Vec<ProviderContribution>,
    /// For a turn of a session: what the model already holds, what changed,
    /// what is withdrawn, and the usage figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionReply>,
}

/// One block of the prompt, as a program needs it: how to cite it, its
/// identity and how it ranked; never its text, which is in the prompt once.
/// Kept small on purpose (a result carries up to 64 of them beside the
/// text): the block's `label` names its file and lines, and a program that
/// needs more asks the provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameEntry {
    /// The label the block is cited by (its `label` attribute).
    pub label: String,
    /// The provider it came from (its `cgp.toml` key).
    pub provider: String,
    /// The frame's id at that provider.
    pub id: String,
    /// The provider's relevance score, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// 1 for the most relevant block of this result (by score), 2 for the
    /// next, … (the prompt's order places the best at its edges).
    pub rank: u32,
    /// Budget tokens of its content (UR1: the result's `usage` sums them).
    pub tokens: u64,
    /// In a session, why a block the model held before is sent again:
    /// `changed` (it `replaces` an earlier label) or `unconfirmed` (resent;
    /// `detail` says why). Absent for a block new to the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The earlier label this block supersedes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// Why a held frame could not be confirmed unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl FrameEntry {
    /// An entry for `citation`, before rank, cost and session reason.
    pub fn from_citation(citation: &Citation, score: Option<f64>) -> Self {
        FrameEntry {
            label: citation.label.clone(),
            provider: citation.frame.provider_id.clone(),
            id: citation.frame.frame_id.clone(),
            score,
            rank: 0,
            tokens: 0,
            reason: None,
            replaces: None,
            detail: None,
        }
    }
}

/// Number `frames` 1, 2, … by score, best first (ties and frames without
/// a score keep their prompt order, after those with one).
pub fn rank_by_score(frames: &mut [FrameEntry]) {
    let mut order: Vec<usize> = (0..frames.len()).collect();
    order.sort_by(|&a, &b| {
        let (sa, sb) = (frames[a].score, frames[b].score);
        match (sa, sb) {
            (Some(x), Some(y)) => y.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then(a.cmp(&b))
    });
    for (rank, i) in order.into_iter().enumerate() {
        frames[i].rank = u32::try_from(rank + 1).unwrap_or(u32::MAX);
    }
}

/// A session turn, as the tool reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionReply {
    /// What to commit once the result is sent ([`ContextService::commit_session`]).
    pub ticket: u64,
    /// Notes for the model, shown before the blocks (outside any fence):
    /// already in context, changed, resent, withdrawn.
    pub notes: String,
    /// The turn in structured form, without what the prompt and
    /// [`ContextToolReply::frames`] already carry: turn, how many frames of
    /// the answer the model already holds (`unchanged`; the note in the text
    /// names them), those it holds under an old label (`moved`), those
    /// `withdrawn` with why, this turn's `figures` and the session's `totals`.
    pub report: serde_json::Value,
    /// UR1 usage report of this call: the frames it sent.
    pub usage: contextgraph_types::UsageReport,
}

/// A one-line account of one provider's part in a composition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderContribution {
    /// The provider id.
    pub provider_id: String,
    /// `accepted`, `quarantined`, `consent_required`, `timed_out`, `crashed`
    /// or `error`: [`OutcomeStatus`](contextgraph_compose::OutcomeStatus),
    /// the vocabulary the CLI, the engine and the audit use too.
    pub status: String,
    /// Frames it offered.
    pub frames_offered: u32,
    /// Frames of its that are in the prompt.
    pub frames_included: u32,
    /// Why it contributed nothing, when it did not (at most
    /// [`MAX_DETAIL_CHARS`] characters: an agent reads this, a log has the rest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Longest [`ProviderContribution::detail`] kept, in characters.
pub const MAX_DETAIL_CHARS: usize = 300;

impl From<&ProviderAudit> for ProviderContribution {
    fn from(audit: &ProviderAudit) -> Self {
        let detail = match &audit.outcome {
            OutcomeAudit::Accepted => None,
            OutcomeAudit::Quarantined { anchors, .. } => Some(format!(
                "its answer broke {} and every frame of it was dropped (B2)",
                anchors.join(", ")
            )),
            OutcomeAudit::ConsentMissing { scopes } => Some(if scopes.is_empty() {
                format!(
                        "it sends data off this machine and has no consent; run `cgp consent grant {}` (C1)",
                        audit.provider_id
                    )
            } else {
                format!(
                    "scopes {} have no consent; run `cgp consent grant {} --scope <scope>` (C6)",
                    scopes.join(", "),
                    audit.provider_id
                )
            }),
            OutcomeAudit::TimedOut { after_ms } => Some(format!("no answer within {after_ms} ms")),
            OutcomeAudit::Crashed { detail } => Some(detail.clone()),
            OutcomeAudit::Error { code, message } => Some(format!("{code}: {message}")),
            // The audit's outcome vocabulary may grow: its status word still
            // comes from the one mapping, with no detail rather than a guess.
            #[allow(unreachable_patterns)]
            _ => None,
        };
        ProviderContribution {
            provider_id: audit.provider_id.clone(),
            status: audit.outcome.status().as_str().to_owned(),
            frames_offered: audit.frames_offered,
            frames_included: audit.frames_included,
            detail: detail.map(|d| contextgraph_types::display_text::bounded(&d, MAX_DETAIL_CHARS)),
        }
    }
}

/// One configured provider as `list_providers` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderListing {
    /// The provider's id (its configured name, or its declared name).
    pub name: String,
    /// Its declared version, when the handshake succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How it is reached: `builtin`, `stdio` or `http`.
    pub transport: String,
    /// Consent state, e.g. `not_needed`, `granted`, `missing`, `revoked`.
    pub consent: String,
    /// Whether it answered, and how fast.
    pub health: Health,
}

/// A provider's health at listing time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// It completed a handshake.
    pub ok: bool,
    /// Handshake latency, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    /// What went wrong, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Whether a service can answer now ([`ContextService::readiness`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Readiness {
    /// It answers now (or fails with an error that says why).
    Ready,
    /// It is still starting (an index being built): how far it is.
    Preparing(Preparing),
}

/// How far a starting service is, as MCP progress (`notifications/progress`)
/// and as the notice a call gets when the wait for it runs out.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparing {
    /// Work done so far (files indexed); never decreases.
    pub done: u64,
    /// Work to do, when known (files to index).
    pub total: Option<u64>,
    /// What is happening, in a sentence (`indexing /repo: 1,200 of 24,000
    /// files, about 2 min to go`).
    pub message: String,
}

/// What the MCP server asks for. Implement it over the real engine (the CLI
/// does) or over canned data (tests do).
///
/// Errors are strings a person can act on: they are returned to the agent
/// as an `isError` tool result, never as a protocol failure, so an engine
/// problem never tears the MCP session down.
pub trait ContextService: Send + Sync + 'static {
    /// Compose the context for one validated request.
    fn get_context(
        &self,
        request: ContextToolRequest,
    ) -> impl Future<Output = Result<ContextToolReply, String>> + Send;

    /// Every configured provider with its consent state and health.
    fn list_providers(&self) -> impl Future<Output = Result<Vec<ProviderListing>, String>> + Send;

    /// Whether a call can be answered now. A service that starts in the
    /// background (indexing a repository) says how far it is; the server
    /// then waits a bounded time, reporting progress to a client that
    /// asked for it, and answers with a notice of how far it is when the
    /// wait runs out. Default: always ready.
    fn readiness(&self) -> Readiness {
        Readiness::Ready
    }

    /// The server sent the session turn staged under `ticket`: make it the
    /// session's state. A service without sessions ignores it.
    fn commit_session(&self, key: &str, ticket: u64) -> impl Future<Output = ()> + Send {
        let _ = (key, ticket);
        async {}
    }
}
