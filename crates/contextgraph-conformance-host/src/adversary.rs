//! In-process adversaries: SDK [`Provider`]s that answer with exactly the
//! lie a check needs, and their well-behaved twins.
//!
//! Each [`Scripted`] provider counts the queries it receives, so a check can
//! tell whether the host sent a payload at all (the consent gate must send
//! nothing), and keeps its last answer, so a check can compare what the
//! provider offered with what the host and composer report.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use contextgraph_provider_sdk::{sha256_digest, Provider, ProviderError};
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, DataFlow, EgressScope, FrameKind,
    Provenance, ProviderInfo, QueryCapability,
};

/// What a scripted provider answers to a query.
pub(crate) type Answerer = dyn Fn(&ContextQuery) -> ContextQueryResult + Send + Sync;

/// A provider with a fixed identity and a scripted answer.
pub(crate) struct Scripted {
    info: ProviderInfo,
    capabilities: Capabilities,
    answer: Box<Answerer>,
    calls: Arc<AtomicUsize>,
    last: Arc<Mutex<Option<ContextQueryResult>>>,
}

/// What a check keeps to observe a [`Scripted`] provider after handing it
/// to the host.
#[derive(Clone, Default)]
pub(crate) struct Probe {
    calls: Arc<AtomicUsize>,
    last: Arc<Mutex<Option<ContextQueryResult>>>,
}

impl Probe {
    /// Queries received so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The frames of the last answer given.
    pub fn last_frames(&self) -> Vec<ContextFrame> {
        self.last
            .lock()
            .map(|l| l.as_ref().map(|r| r.frames.clone()).unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Scripted {
    /// A local (no egress) provider called `name` answering with `answer`.
    pub fn new(
        name: &str,
        answer: impl Fn(&ContextQuery) -> ContextQueryResult + Send + Sync + 'static,
    ) -> Self {
        Scripted {
            info: ProviderInfo {
                name: name.to_owned(),
                version: "1.0.0".to_owned(),
                data_flow: DataFlow {
                    reads: true,
                    ..DataFlow::default()
                },
            },
            capabilities: Capabilities {
                query: QueryCapability {
                    kinds: vec![FrameKind::Doc],
                },
                ..Capabilities::default()
            },
            answer: Box::new(answer),
            calls: Arc::default(),
            last: Arc::default(),
        }
    }

    /// The same provider announcing `name` and `version` verbatim (H2 adversaries).
    pub fn with_identity(mut self, name: &str, version: &str) -> Self {
        self.info.name = name.to_owned();
        self.info.version = version.to_owned();
        self
    }

    /// The same provider declaring `egress: true` with `scopes`.
    pub fn with_egress(mut self, scopes: Vec<EgressScope>) -> Self {
        self.info.data_flow.egress = true;
        self.info.data_flow.egress_scopes = scopes;
        self
    }

    /// The handle a check keeps.
    pub fn probe(&self) -> Probe {
        Probe {
            calls: Arc::clone(&self.calls),
            last: Arc::clone(&self.last),
        }
    }
}

impl Provider for Scripted {
    fn info(&self) -> ProviderInfo {
        self.info.clone()
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities.clone()
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let result = (self.answer)(query);
        if let Ok(mut last) = self.last.lock() {
            *last = Some(result.clone());
        }
        Ok(result)
    }
}

/// An honest `doc` frame: exact cost (B3), real digest (D1), a file
/// provenance digest of the same bytes (F5), a label (F3) and a score (F1).
pub(crate) fn honest_frame(id: &str, content: &str) -> ContextFrame {
    let mut f = ContextFrame::new(id, FrameKind::Doc, format!("Document {id}"), content);
    f.score = 0.5;
    f.citation_label = Some(format!("{id}.md"));
    f.content_digest = Some(sha256_digest(content.as_bytes()));
    f.uri = Some(format!("file:///host-suite/{id}.md"));
    f.provenance = vec![Provenance {
        kind: Provenance::FILE.to_owned(),
        uri: f.uri.clone(),
        range: None,
        digest: Some(sha256_digest(content.as_bytes())),
        method: None,
        by: None,
    }];
    f
}

/// `n` honest frames with distinct contents, prefixed `prefix`.
pub(crate) fn honest_frames(prefix: &str, n: usize) -> Vec<ContextFrame> {
    (0..n)
        .map(|i| {
            honest_frame(
                &format!("{prefix}-{i}"),
                &format!("Evidence {i} from {prefix}: retries back off exponentially.\n"),
            )
        })
        .collect()
}

/// An answer holding `frames`, nothing withheld.
pub(crate) fn answer(frames: Vec<ContextFrame>) -> ContextQueryResult {
    ContextQueryResult {
        frames,
        truncated: false,
        dropped_estimate: None,
    }
}
