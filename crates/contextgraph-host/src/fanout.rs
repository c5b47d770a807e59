//! The host: a set of providers, queried together under one deadline, every
//! answer audited, every outcome typed.
//!
//! Per provider, [`Host::query_all`]:
//! 1. makes it ready (connect, spawn or respawn, handshake) — no payload moves;
//! 2. checks consent against what it declared ([`crate::consent::check`]):
//!    an egress provider without a live grant, or with off-machine scopes
//!    lacking receipts, is sent nothing (C1, C2, C6);
//! 3. adapts the query to what it may receive: the embedding only on an exact
//!    fingerprint match (E1), only advertised representations (P5); the `id`
//!    only when correlation was declared (H4, done by the connection);
//! 4. sends it, retrying `unavailable` with backoff inside the deadline and
//!    never retrying anything else (`bad_request`, `incompatible_version`, …);
//! 5. audits the answer ([`crate::audit`]): repairs what the policy allows
//!    ([`crate::repair`], recorded in the outcome) and quarantines it whole
//!    on any other violation (B2).
//!
//! Providers are keyed by the host: [`Host::add_as`] gives a provider a key
//! (a configuration name) under which its frames, consent and reports go,
//! so two providers that announce the same name can be used side by side.
//!
//! A provider's failure is its own outcome: a slow, crashed or lying provider
//! never delays past the deadline, nor changes, the outcome of the others.

use std::sync::Arc;
use std::time::Duration;

use contextgraph_provider_sdk::Provider;
use contextgraph_types::validate::{Anchor, Violation};
use contextgraph_types::{
    embedding_fingerprints_match, ContextFrame, ContextQuery, ErrorCode, FrameId, HostReaction,
    Timestamp,
};
use tokio::task::JoinSet;
use tokio::time::Instant;

mod composition;
mod join;

use crate::audit::{audit_answer_with, AuditPolicy, AuditVerdict, DroppedFrame, Repair};
use crate::client::{ProviderClient, RequestError, StdioOptions, StdioProvider};
use crate::connection::{Answer, ConnectionError};
use crate::consent::{self, ConsentDecision, ConsentLedger, ConsentStore};
use crate::error::HostError;
use crate::handshake::ProviderDescriptor;
use crate::transport::in_process::InProcessProvider;
use crate::transport::stdio::StdioCommand;

/// Host-wide settings.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HostOptions {
    /// The host's embedding space (`<model-id>/<dimensions>[/<normalization>]`);
    /// a query's embedding is sent only to providers declaring exactly this (E1).
    pub embedding_fingerprint: Option<String>,
    /// First wait before retrying `unavailable` (default 20 ms, doubled each time).
    pub retry_backoff: Duration,
    /// Most retries of `unavailable` per query (default 3).
    pub max_retries: u32,
    /// Whether the audit repairs what it safely can (the default) or
    /// quarantines every fault ([`AuditPolicy::Strict`]).
    pub audit: AuditPolicy,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            embedding_fingerprint: None,
            retry_backoff: Duration::from_millis(20),
            max_retries: 3,
            audit: AuditPolicy::default(),
        }
    }
}

/// What happened with one provider in a fan-out.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProviderOutcome {
    /// The answer passed the audit.
    Accepted {
        /// The frames (known kinds only), repaired.
        frames: Vec<ContextFrame>,
        /// The provider left candidates out.
        truncated: bool,
        /// Frames of unknown kinds, dropped with a report (U2).
        dropped: Vec<DroppedFrame>,
        /// Faults the host repaired rather than quarantine the answer
        /// ([`crate::repair`]); each is reported.
        repairs: Vec<Repair>,
    },
    /// An egress provider without a live grant (C1, C2): nothing was sent.
    ConsentRequired {
        /// What to grant: the name to pin.
        provider_name: String,
        /// What to grant: the version to pin.
        provider_version: String,
        /// Why the records on file do not cover it.
        reason: String,
    },
    /// Off-machine scopes without live receipts (C6): nothing was sent.
    ScopeReceiptsMissing {
        /// The scopes needing a receipt.
        scopes: Vec<contextgraph_types::EgressScope>,
        /// The version the receipts must pin.
        provider_version: String,
    },
    /// No answer by the deadline.
    TimedOut {
        /// How long the request ran.
        after_ms: u128,
    },
    /// The provider process died.
    Crashed {
        /// How it ended.
        status: String,
        /// The end of its stderr.
        stderr_tail: String,
    },
    /// The provider answered `error`.
    ProviderError {
        /// The code as sent.
        code: Option<ErrorCode>,
        /// The code acted on (unknown and absent codes are `internal`, X1/X2).
        effective: ErrorCode,
        /// What the code calls for.
        reaction: HostReaction,
        /// Its message, shortened.
        message: String,
        /// How many times the query was sent.
        attempts: u32,
    },
    /// The answer broke protocol rules and was dropped whole (B2).
    Quarantined {
        /// Every violation, with anchor and path.
        violations: Vec<Violation>,
        /// How many frames were offered.
        frames_offered: usize,
        /// Their identities.
        offered: Vec<FrameId>,
        /// The frames as offered: never used, kept so that a composition
        /// audit can name and count each one it rejects.
        frames: Vec<ContextFrame>,
    },
    /// The provider cannot be sent this query (e.g. no advertised
    /// representation was wanted, P5); nothing was sent.
    Skipped {
        /// The rule.
        anchor: Anchor,
        /// Why.
        reason: String,
    },
    /// Anything else: handshake failure, H4 violation, malformed reply, respawn backoff.
    Failed {
        /// The error.
        error: RequestError,
    },
}

/// One provider's line in a fan-out report.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderReport {
    /// The provider's key: the one given to [`Host::add_as`], else the name
    /// it announced.
    pub provider_id: String,
    /// What happened.
    pub outcome: ProviderOutcome,
    /// The query as sent to this provider, if one was sent.
    pub sent: Option<ContextQuery>,
    /// How long the fan-out spent on this provider (ready, consent, the
    /// query with its retries, the audit): what a slow or dead provider
    /// cost, so a report can show that it cost no more than its deadline.
    pub elapsed: Duration,
}

/// The result of [`Host::query_all`].
#[derive(Debug, Clone, PartialEq)]
pub struct FanOutReport {
    /// The query as the embedder asked it.
    pub query: ContextQuery,
    /// One report per provider, in the order the providers were added.
    pub providers: Vec<ProviderReport>,
    /// Host-level warnings (unreadable consent records, …).
    pub warnings: Vec<String>,
}

impl FanOutReport {
    /// Every accepted frame with the id of the provider that served it.
    pub fn accepted_frames(&self) -> impl Iterator<Item = (&str, &ContextFrame)> {
        self.providers.iter().flat_map(|p| {
            let frames: &[ContextFrame] = match &p.outcome {
                ProviderOutcome::Accepted { frames, .. } => frames,
                _ => &[],
            };
            frames.iter().map(move |f| (p.provider_id.as_str(), f))
        })
    }

    /// The report for `provider_id`.
    pub fn provider(&self, provider_id: &str) -> Option<&ProviderReport> {
        self.providers.iter().find(|p| p.provider_id == provider_id)
    }
}

struct Entry {
    id: String,
    client: Arc<dyn ProviderClient>,
}

/// A host: providers, a consent store and the fan-out.
pub struct Host {
    entries: Vec<Entry>,
    consent: Option<ConsentStore>,
    options: HostOptions,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field(
                "providers",
                &self.entries.iter().map(|e| &e.id).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A host with no providers and no consent store (so every egress
    /// provider is refused until one is attached).
    pub fn new(options: HostOptions) -> Self {
        Host {
            entries: Vec::new(),
            consent: None,
            options,
        }
    }

    /// Attach the consent store consulted on every fan-out.
    #[must_use]
    pub fn with_consent_store(mut self, store: ConsentStore) -> Self {
        self.consent = Some(store);
        self
    }

    /// The consent store, if attached.
    pub fn consent_store(&self) -> Option<&ConsentStore> {
        self.consent.as_ref()
    }

    /// Add a provider, connecting it (handshake) now to learn its id: it is
    /// keyed by the name it announces. Use [`add_as`](Self::add_as) to key
    /// it yourself.
    pub async fn add(
        &mut self,
        client: Arc<dyn ProviderClient>,
        timeout: Duration,
    ) -> Result<Arc<ProviderDescriptor>, HostError> {
        let descriptor = client.ready(Instant::now() + timeout).await?;
        self.insert(client, descriptor).await
    }

    /// Add a provider under the host's own `key` (a configuration name),
    /// connecting it now. Its frames, consent, reports and `verify`
    /// requests carry `key` as the provider id; the name it announced stays
    /// in the descriptor's `info`. Two providers announcing the same name
    /// can be added under different keys.
    pub async fn add_as(
        &mut self,
        key: &str,
        client: Arc<dyn ProviderClient>,
        timeout: Duration,
    ) -> Result<Arc<ProviderDescriptor>, HostError> {
        let client: Arc<dyn ProviderClient> = Arc::new(crate::keyed::Keyed::new(key, client));
        let descriptor = client.ready(Instant::now() + timeout).await?;
        self.insert(client, descriptor).await
    }

    async fn insert(
        &mut self,
        client: Arc<dyn ProviderClient>,
        descriptor: Arc<ProviderDescriptor>,
    ) -> Result<Arc<ProviderDescriptor>, HostError> {
        if self.entries.iter().any(|e| e.id == descriptor.id) {
            client.shutdown().await;
            return Err(HostError::DuplicateProvider {
                provider: descriptor.id.clone(),
            });
        }
        self.entries.push(Entry {
            id: descriptor.id.clone(),
            client,
        });
        Ok(descriptor)
    }

    /// Add an in-process provider.
    pub async fn add_in_process(
        &mut self,
        provider: impl Provider,
    ) -> Result<Arc<ProviderDescriptor>, HostError> {
        let client = InProcessProvider::new(provider).map_err(RequestError::from)?;
        self.add(Arc::new(client), Duration::from_secs(1)).await
    }

    /// Add an in-process provider under the host's own `key` (see
    /// [`add_as`](Self::add_as)).
    pub async fn add_in_process_as(
        &mut self,
        key: &str,
        provider: impl Provider,
    ) -> Result<Arc<ProviderDescriptor>, HostError> {
        let client = InProcessProvider::new(provider).map_err(RequestError::from)?;
        self.add_as(key, Arc::new(client), Duration::from_secs(1))
            .await
    }

    /// Spawn a stdio provider and add it.
    pub async fn add_stdio(
        &mut self,
        command: StdioCommand,
        options: StdioOptions,
    ) -> Result<Arc<ProviderDescriptor>, HostError> {
        let timeout = options.connection.handshake_timeout;
        self.add(Arc::new(StdioProvider::new(command, options)), timeout)
            .await
    }

    /// Add an HTTP provider (handshake now; nothing is sent before the URL
    /// passed the C7/C8 checks).
    pub async fn add_http(
        &mut self,
        config: crate::transport::http::HttpConfig,
        timeout: Duration,
    ) -> Result<Arc<ProviderDescriptor>, HostError> {
        let client =
            crate::transport::http::HttpProviderClient::new(config).map_err(RequestError::from)?;
        self.add(Arc::new(client), timeout).await
    }

    /// The client for `provider_id`.
    pub fn client(&self, provider_id: &str) -> Option<Arc<dyn ProviderClient>> {
        self.entries
            .iter()
            .find(|e| e.id == provider_id)
            .map(|e| Arc::clone(&e.client))
    }

    /// The provider ids, in the order added.
    pub fn provider_ids(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.id.clone()).collect()
    }

    /// Load the consent ledger (an empty one, with a warning, when the store
    /// cannot be read: failing closed, never open).
    pub(crate) fn ledger(&self) -> (ConsentLedger, Vec<String>) {
        match &self.consent {
            None => (ConsentLedger::default(), Vec::new()),
            Some(store) => match store.load() {
                Ok(ledger) => {
                    let warnings = ledger.warnings.clone();
                    (ledger, warnings)
                }
                Err(e) => (
                    ConsentLedger::default(),
                    vec![format!(
                        "{e}; egress providers are refused until it is readable"
                    )],
                ),
            },
        }
    }

    /// Query every provider concurrently; every outcome is in by `timeout`.
    ///
    /// The providers are served side by side within the caller's task rather
    /// than one spawned task each: a fan-out is mostly waiting, and each
    /// reply is already read and decoded by its connection's reader task, so
    /// a task per provider would only add two wake-ups (and, from outside the
    /// runtime, two thread hand-offs) to every provider's round trip. Each
    /// provider's future is polled only when it was woken, and one that
    /// panics becomes that provider's failure, as a panicking task would.
    pub async fn query_all(&self, query: &ContextQuery, timeout: Duration) -> FanOutReport {
        let began = Instant::now();
        let deadline = began + timeout;
        let (ledger, warnings) = self.ledger();
        let options = &self.options;
        let ledger = &ledger;
        let served = join::all(self.entries.iter().map(|entry| {
            query_one(
                Arc::clone(&entry.client),
                entry.id.clone(),
                query,
                ledger,
                deadline,
                options,
            )
        }))
        .await;
        let providers = served
            .into_iter()
            .zip(&self.entries)
            .map(|(slot, entry)| {
                slot.unwrap_or_else(|| ProviderReport {
                    provider_id: entry.id.clone(),
                    outcome: ProviderOutcome::Failed {
                        error: RequestError::InProcess {
                            provider: entry.id.clone(),
                            detail: "the host code serving this provider panicked".to_owned(),
                        },
                    },
                    sent: None,
                    elapsed: began.elapsed(),
                })
            })
            .collect();
        FanOutReport {
            query: query.clone(),
            providers,
            warnings,
        }
    }

    /// Shut every provider down (R2).
    pub async fn shutdown(&self) {
        let mut set = JoinSet::new();
        for entry in &self.entries {
            let client = Arc::clone(&entry.client);
            set.spawn(async move { client.shutdown().await });
        }
        while set.join_next().await.is_some() {}
    }
}

/// The query as `provider` may receive it, or why it may receive none.
pub fn adapt_query(
    query: &ContextQuery,
    provider: &ProviderDescriptor,
    host_fingerprint: Option<&str>,
) -> Result<ContextQuery, (Anchor, String)> {
    let mut sent = query.clone();
    // E1: a vector from another space is meaningless to the provider, and it
    // is still workspace-derived data: send it only on an exact match.
    let matches = match (
        host_fingerprint,
        &provider.capabilities.embeddings_fingerprint,
    ) {
        (Some(host), Some(theirs)) => embedding_fingerprints_match(host, theirs),
        _ => false,
    };
    if !matches {
        sent.embedding = None;
    }
    // P5: ask only for what it advertised.
    let caps = &provider.capabilities;
    let wanted = query.effective_preferences();
    let offered: Vec<_> = wanted
        .iter()
        .copied()
        .filter(|r| caps.offers_representation(*r))
        .collect();
    if offered.is_empty() {
        return Err((
            Anchor::P5,
            format!(
                "it offers {} but the query accepts only {}",
                join(&caps.offered_representations()),
                join(&wanted)
            ),
        ));
    }
    sent.representation_preferences = if offered == [contextgraph_types::Representation::Full] {
        Vec::new()
    } else {
        offered
    };
    Ok(sent)
}

fn join(reps: &[contextgraph_types::Representation]) -> String {
    reps.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

async fn query_one(
    client: Arc<dyn ProviderClient>,
    id: String,
    query: &ContextQuery,
    ledger: &ConsentLedger,
    deadline: Instant,
    options: &HostOptions,
) -> ProviderReport {
    let began = Instant::now();
    let report = |outcome, sent| ProviderReport {
        provider_id: id.clone(),
        outcome,
        sent,
        elapsed: began.elapsed(),
    };
    let descriptor = match client.ready(deadline).await {
        Ok(d) => d,
        Err(error) => return report(failure(error), None),
    };
    match consent::check(&descriptor, ledger, Timestamp::now()) {
        ConsentDecision::Allowed => {}
        ConsentDecision::ConsentRequired {
            provider_name,
            provider_version,
            reason,
            ..
        } => {
            return report(
                ProviderOutcome::ConsentRequired {
                    provider_name,
                    provider_version,
                    reason,
                },
                None,
            )
        }
        ConsentDecision::ScopeReceiptsMissing {
            scopes,
            provider_version,
            ..
        } => {
            return report(
                ProviderOutcome::ScopeReceiptsMissing {
                    scopes,
                    provider_version,
                },
                None,
            )
        }
    }
    let sent = match adapt_query(query, &descriptor, options.embedding_fingerprint.as_deref()) {
        Ok(q) => q,
        Err((anchor, reason)) => return report(ProviderOutcome::Skipped { anchor, reason }, None),
    };
    let mut attempts = 0u32;
    let mut backoff = options.retry_backoff;
    loop {
        attempts += 1;
        let outcome = match client.query(&sent, deadline).await {
            Ok(Answer::Frames(result)) => {
                match audit_answer_with(&id, &sent, result, options.audit) {
                    AuditVerdict::Accepted {
                        frames,
                        truncated,
                        dropped,
                        repairs,
                    } => ProviderOutcome::Accepted {
                        frames,
                        truncated,
                        dropped,
                        repairs,
                    },
                    AuditVerdict::Quarantined {
                        violations,
                        frames_offered,
                        offered,
                        frames,
                    } => ProviderOutcome::Quarantined {
                        violations,
                        frames_offered,
                        offered,
                        frames,
                    },
                }
            }
            Ok(Answer::Error { code, message }) => {
                let effective = ErrorCode::effective(code.as_ref());
                let retry_at = Instant::now() + backoff;
                if effective.is_retryable()
                    && attempts <= options.max_retries
                    && retry_at < deadline
                {
                    tokio::time::sleep_until(retry_at).await;
                    backoff = backoff.saturating_mul(2);
                    continue;
                }
                ProviderOutcome::ProviderError {
                    reaction: effective.reaction(),
                    code,
                    effective,
                    message,
                    attempts,
                }
            }
            Ok(Answer::Verified(_)) => failure(
                ConnectionError::WrongReply {
                    provider: descriptor.id.clone(),
                    expected: "query",
                    got: "verified".to_owned(),
                }
                .into(),
            ),
            Err(error) => failure(error),
        };
        return report(outcome, Some(sent));
    }
}

fn failure(error: RequestError) -> ProviderOutcome {
    match error {
        RequestError::Connection(ConnectionError::Timeout { after_ms, .. }) => {
            ProviderOutcome::TimedOut { after_ms }
        }
        RequestError::Crashed {
            status,
            stderr_tail,
            ..
        } => ProviderOutcome::Crashed {
            status,
            stderr_tail,
        },
        error if error.is_timeout() => ProviderOutcome::TimedOut { after_ms: 0 },
        error => ProviderOutcome::Failed { error },
    }
}
