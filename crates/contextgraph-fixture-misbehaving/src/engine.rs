//! The provider logic without any transport: what to announce, how to
//! answer a query, how to answer a verify, in the chosen mode.
//!
//! Wire-level misbehaviours (ids, garbage, crashes, hangs, delays) are not
//! here; they live in [`serve`](mod@crate::serve). Keeping the two apart means
//! the engine can be benchmarked and unit-tested in process, and every mode
//! is implemented in exactly one place.

use std::collections::BTreeMap;

use contextgraph_codec::Envelope;
use contextgraph_provider_sdk::ProviderError;
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, ProviderInfo, VerifyRequest,
    VerifyResponse,
};

use crate::baseline;
use crate::corpus::Corpus;
use crate::handshake;
use crate::mode::Baseline;
use crate::mode::Mode;
use crate::relevance::{score_all, AnchorPolicy, EMBEDDINGS_FINGERPRINT};
use crate::sabotage;
use crate::verify;

/// The provider in one mode over one corpus.
#[derive(Debug)]
pub struct Engine {
    /// The plain mode (a combined mode's second fault).
    mode: Mode,
    /// A combined mode's baseline fault.
    baseline: Option<Baseline>,
    corpus: Corpus,
    info: ProviderInfo,
    capabilities: Capabilities,
}

impl Engine {
    /// An engine announcing `name`/`version`. In `unknown-kind` mode the
    /// hologram frame joins the corpus, so it is served and verified like
    /// any other frame. A combined mode is split ([`Mode::split`]): its
    /// baseline fault applies to every frame, its plain mode behaves as alone.
    pub fn new(mode: Mode, mut corpus: Corpus, name: &str, version: &str) -> Self {
        let (baseline, mode) = mode.split();
        if mode == Mode::UnknownKind {
            corpus.push_derived(sabotage::hologram_frame());
        }
        Engine {
            mode,
            baseline,
            corpus,
            info: handshake::provider_info(mode, name, version),
            capabilities: handshake::capabilities(mode),
        }
    }

    /// The plain mode: for a combined mode, the fault on top of its
    /// baseline (wire-level modes are never combined, so this is what the
    /// transport acts on).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// A combined mode's baseline fault.
    pub fn baseline(&self) -> Option<Baseline> {
        self.baseline
    }

    /// Every servable frame now, with the baseline fault applied.
    fn frames(&self) -> Vec<ContextFrame> {
        let mut frames = self.corpus.frames(&self.info.name);
        if let Some(b) = self.baseline {
            baseline::apply(b, &mut frames);
        }
        frames
    }

    /// The provider name, which hosts use as the provider id.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The corpus served.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// Identity and data flow as announced.
    pub fn info(&self) -> &ProviderInfo {
        &self.info
    }

    /// Capabilities as announced.
    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// The `handshake_ack` (with `wrong-version`'s version in that mode).
    pub fn handshake_ack(&self) -> Envelope {
        Envelope::HandshakeAck {
            protocol_version: handshake::protocol_version(self.mode).to_owned(),
            provider: self.info.clone(),
            capabilities: self.capabilities.clone(),
        }
    }

    /// Answer a query: validate it (shape, F4 `as_of`, E1 dimension —
    /// skipped by `accept-wrong-dimension`), score every servable frame,
    /// pack greedily by score under the budget (B1, B4, Q1, `as_of`), and
    /// let the mode break its one rule.
    pub fn answer(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let mut problems: Vec<String> = query.validate().iter().map(ToString::to_string).collect();
        if self.mode != Mode::AcceptWrongDimension {
            if let Some(v) = query.embedding_violation(Some(EMBEDDINGS_FINGERPRINT)) {
                problems.push(format!(
                    "{v}; send an embedding only when your fingerprint equals {EMBEDDINGS_FINGERPRINT} exactly, or send none"
                ));
            }
        }
        if !problems.is_empty() {
            return Err(ProviderError::bad_request(format!(
                "invalid query: {}",
                problems.join("; ")
            )));
        }
        let policy = if self.mode == Mode::IgnoredAnchors {
            AnchorPolicy::Bury
        } else {
            AnchorPolicy::Boost
        };
        let mut candidates = self.frames();
        score_all(&mut candidates, query, policy);
        Ok(sabotage::answer(
            self.mode,
            query,
            candidates,
            &self.info.name,
        ))
    }

    /// Answer a verify against what is served now (content re-read from disk).
    pub fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        let current: BTreeMap<String, Option<String>> = self
            .frames()
            .into_iter()
            .map(|f| (f.id, f.content_digest))
            .collect();
        verify::verify(self.mode, &self.info.name, &current, request)
    }
}
