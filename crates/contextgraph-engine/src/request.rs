//! What a front end asks ([`ContextRequest`]) and gets back
//! ([`ContextAnswer`]), and how each provider's fan-out outcome becomes a
//! composition input plus a summary a person can act on.

use contextgraph_compose::{Budget, Composition, Placement, ProviderOutcome as ComposeOutcome};
use contextgraph_host::ProviderOutcome;
use contextgraph_types::FrameKind;
use serde::Serialize;

/// A request for context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    /// What the context is for.
    pub goal: String,
    /// The budget of the whole prompt in model tokens; 0 means the
    /// configured `budget`.
    pub budget_model_tokens: u32,
    /// Only these kinds (empty: any).
    pub kinds: Vec<FrameKind>,
    /// Files or symbols the goal is about.
    pub anchors: Vec<String>,
    /// The most frames asked of each provider (1 to [`MAX_FRAMES`]).
    pub max_frames: u32,
    /// Ranked (best at the edges) or stable (byte-identical for caches).
    pub placement: Placement,
    /// Model tokens per budget token; `None` means the configured `safety_factor`.
    pub safety_factor: Option<f64>,
    /// An exact budget, overriding `budget_model_tokens` and `safety_factor`
    /// (e.g. a budget in budget tokens).
    pub budget: Option<Budget>,
}

/// Largest `max_frames` accepted.
pub const MAX_FRAMES: u32 = 1000;

impl Default for ContextRequest {
    fn default() -> Self {
        ContextRequest {
            goal: String::new(),
            budget_model_tokens: 0,
            kinds: Vec::new(),
            anchors: Vec::new(),
            max_frames: 64,
            placement: Placement::Ranked,
            safety_factor: None,
            budget: None,
        }
    }
}

/// The answer: the composition and what happened with every provider.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextAnswer {
    /// Prompt, citations, audit and usage (see `contextgraph-compose`).
    pub composition: Composition,
    /// One entry per configured, enabled provider, in configuration order.
    pub providers: Vec<ProviderOutcomeSummary>,
    /// Host-level warnings (an unreadable consent store, …).
    pub warnings: Vec<String>,
    /// The audited outcomes the composition was made from, in configuration
    /// order. Reports use them to show each frame's kind, title and score,
    /// which the audit does not record; they are not part of the JSON answer.
    #[serde(skip)]
    pub outcomes: Vec<ComposeOutcome>,
}

impl ContextAnswer {
    /// How many providers answered (their answer passed the audit).
    pub fn answered(&self) -> usize {
        self.providers
            .iter()
            .filter(|p| p.status == OutcomeStatus::Accepted)
            .count()
    }
}

pub use contextgraph_compose::OutcomeStatus;

/// One provider's line in a [`ContextAnswer`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderOutcomeSummary {
    /// The configured name.
    pub name: String,
    /// The key its frames and consent go under (its configured name), when
    /// it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// The name it announced at the handshake, shown beside the key (two
    /// providers may announce the same name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub announced_name: Option<String>,
    /// What happened.
    pub status: OutcomeStatus,
    /// Frames accepted.
    pub frames: usize,
    /// Frames its answer offered, whatever became of them (a quarantined
    /// answer's included).
    pub frames_offered: usize,
    /// Frames of its answer the host rejected: a quarantined answer's all,
    /// an accepted one's of unknown kinds.
    pub frames_rejected: usize,
    /// Faults the host repaired in its answer rather than quarantine it,
    /// one sentence each (`repaired: D1 — …`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<String>,
    /// It left candidates out.
    pub truncated: bool,
    /// Frames of unknown kinds it served, dropped (U2).
    pub dropped_unknown_kinds: usize,
    /// Why, when it contributed nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What to run to fix it, when there is one thing (a consent grant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Its deadline for this answer (`timeout_ms` in cgp.toml).
    pub timeout_ms: u64,
    /// How long the fan-out spent on it, when it was started: a slow or
    /// dead provider costs at most its `timeout_ms` (plus timer slack), and
    /// this is where a many-shard setup sees which shard cost what.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
}

impl ProviderOutcomeSummary {
    pub(crate) fn new(name: &str, provider_id: Option<&str>, status: OutcomeStatus) -> Self {
        ProviderOutcomeSummary {
            name: name.to_owned(),
            provider_id: provider_id.map(str::to_owned),
            announced_name: None,
            status,
            frames: 0,
            frames_offered: 0,
            frames_rejected: 0,
            repairs: Vec::new(),
            truncated: false,
            dropped_unknown_kinds: 0,
            detail: None,
            action: None,
            timeout_ms: 0,
            elapsed_ms: None,
        }
    }
}

/// Longest provider-controlled text copied into a summary.
const MAX_DETAIL_CHARS: usize = 600;

pub(crate) fn shorten(text: &str) -> String {
    contextgraph_types::display_text::bounded(text, MAX_DETAIL_CHARS)
}

/// [`shorten`] line by line, newlines kept: each line is made safe on its
/// own, and at most [`start_failure::MAX_STDERR_LINES`](crate::start_failure::MAX_STDERR_LINES)
/// + 1 lines are kept.
pub(crate) fn shorten_lines(text: &str) -> String {
    text.lines()
        .take(crate::start_failure::MAX_STDERR_LINES + 1)
        .map(shorten)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Map one host outcome of the provider keyed `name` (which announced
/// `announced`) to the composer's input and a summary. `grant` builds the
/// exact consent command for a list of scopes.
pub(crate) fn map_outcome(
    name: &str,
    announced: &str,
    outcome: &ProviderOutcome,
    grant: &dyn Fn(&[String]) -> String,
) -> (ComposeOutcome, ProviderOutcomeSummary) {
    // The composer's input and the status word come from the host's one
    // mapping; what is added here is the sentence a person reads.
    let compose = outcome.to_composition(name, Vec::new());
    let provider_id = name;
    let mut summary = ProviderOutcomeSummary::new(name, Some(name), outcome.status());
    summary.announced_name = Some(shorten(announced));
    summary.detail = match outcome {
        ProviderOutcome::Accepted {
            frames,
            truncated,
            dropped,
            repairs,
        } => {
            summary.frames = frames.len();
            summary.frames_offered = frames.len() + dropped.len();
            summary.frames_rejected = dropped.len();
            summary.truncated = *truncated;
            summary.dropped_unknown_kinds = dropped.len();
            summary.repairs = repairs.iter().map(|r| shorten(&r.to_string())).collect();
            None
        }
        ProviderOutcome::ConsentRequired {
            provider_version,
            reason,
            ..
        } => {
            let command = grant(&[]);
            let detail = format!(
                "C1/C2: {provider_id} {provider_version} sends data off this machine and {reason}; nothing was sent to it. To allow it, run: {command}"
            );
            summary.action = Some(command);
            Some(detail)
        }
        ProviderOutcome::ScopeReceiptsMissing {
            scopes,
            provider_version,
        } => {
            let scopes: Vec<String> = scopes.iter().map(|s| s.as_str().to_owned()).collect();
            let command = grant(&scopes);
            let detail = format!(
                "C6: {provider_id} {provider_version} sends data to {} without a consent receipt for it; nothing was sent to it. To allow it, run: {command}",
                scopes.join(", ")
            );
            summary.action = Some(command);
            Some(detail)
        }
        ProviderOutcome::TimedOut { after_ms } => Some(format!(
            "no answer within {after_ms} ms; raise its timeout_ms in cgp.toml if it is just slow"
        )),
        ProviderOutcome::Crashed {
            status,
            stderr_tail,
        } => Some(shorten(&format!(
            "crashed ({status}); its stderr ended with: {stderr_tail:?}"
        ))),
        ProviderOutcome::ProviderError {
            effective,
            message,
            attempts,
            ..
        } => Some(shorten(&format!(
            "answered error {effective} after {attempts} attempt(s): {message}"
        ))),
        ProviderOutcome::Quarantined {
            violations,
            frames_offered,
            ..
        } => {
            summary.frames_offered = *frames_offered;
            summary.frames_rejected = *frames_offered;
            let mut anchors: Vec<&str> = violations.iter().map(|v| v.anchor.as_str()).collect();
            anchors.sort_unstable();
            anchors.dedup();
            let first = violations
                .first()
                .map(|v| {
                    format!(
                        "; first: {} at {}: {}",
                        v.anchor.as_str(),
                        v.path,
                        v.message
                    )
                })
                .unwrap_or_default();
            Some(shorten(&format!(
                "B2: its answer of {frames_offered} frame(s) broke {} and was dropped whole{first}",
                anchors.join(", ")
            )))
        }
        ProviderOutcome::Skipped { anchor, reason } => Some(shorten(&format!(
            "{}: not queried: {reason}",
            anchor.as_str()
        ))),
        ProviderOutcome::Failed { error } => Some(shorten(&error.to_string())),
        other => Some(shorten(&format!("{other:?}"))),
    };
    (compose, summary)
}
