//! The frame cache and its revalidation (V1–V4, D3, D4).
//!
//! Frames accepted in one fan-out may be reused in a later one only after the
//! provider confirms them: [`Host::revalidate`] sends `verify` (identities
//! only, V1) to each provider that declared it (V2) and keeps a frame **only**
//! on an explicit `valid` (V3). Everything else evicts: `stale`, `gone`,
//! `unknown`, a missing verdict, an error, a timeout, a provider that cannot
//! verify, and any frame without a content digest (D3 — it could not be
//! checked, so it is re-queried instead).
//!
//! A frame is held under the identity the host gave it, with the digest the
//! host recomputed. When the host repaired a provider's digest (D1, see
//! [`crate::repair`]), the provider's own digest is kept beside it and is
//! what `verify` sends back: the provider judges the digest it chose, so
//! reuse works with providers that hash something else (the whole file, say).
//! Verdicts are mapped back to the host's identity.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use contextgraph_types::limits::MAX_VERIFY_FRAMES;
use contextgraph_types::{ContextFrame, FrameId, Timestamp, Verdict, VerifyRequest};
use serde::Serialize;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::connection::Answer;
use crate::consent;
use crate::fanout::{FanOutReport, Host, ProviderOutcome};
use crate::repair::RepairKind;

/// Frames held for reuse, keyed (and ordered canonically) by FrameId.
#[derive(Debug, Clone, Default)]
pub struct FrameCache {
    entries: BTreeMap<FrameId, ContextFrame>,
    /// The provider's own digest of a held frame whose digest the host
    /// repaired: what `verify` presents to that provider.
    declared: BTreeMap<FrameId, String>,
}

/// Why a frame left the cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EvictionReason {
    /// D3: no content digest, so it cannot be verified; re-query it.
    NoDigest,
    /// V2: the provider did not declare `verify`; re-query it.
    ProviderCannotVerify,
    /// The provider answered `stale` (V4: with at most a digest).
    Stale {
        /// The provider's current digest, if it sent one.
        replacement_digest: Option<String>,
    },
    /// The provider answered `gone`.
    Gone,
    /// The provider answered `unknown`, or gave no verdict for it (V2).
    Unknown,
    /// The verify failed (error, timeout, crash, consent) — no `valid`, no reuse.
    VerifyFailed {
        /// What happened.
        detail: String,
    },
    /// The provider is no longer part of the host.
    UnknownProvider,
}

/// The outcome of a revalidation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RevalidationReport {
    /// Frames confirmed `valid`, still in the cache, safe to reuse.
    pub reusable: Vec<FrameId>,
    /// Frames evicted, each with its reason.
    pub evicted: Vec<(FrameId, EvictionReason)>,
}

impl FrameCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Hold every frame accepted in `report`, remembering the provider's
    /// own digest of each frame whose digest the host repaired.
    pub fn insert_report(&mut self, report: &FanOutReport) {
        for p in &report.providers {
            let ProviderOutcome::Accepted {
                frames, repairs, ..
            } = &p.outcome
            else {
                continue;
            };
            for frame in frames {
                let declared = repairs
                    .iter()
                    .find(|r| r.kind == RepairKind::ContentDigest && r.frame_id == frame.id)
                    .map(|r| r.declared.clone());
                self.insert_declared(&p.provider_id, frame.clone(), declared);
            }
        }
    }

    /// Hold `frame` as served by `provider_id`.
    pub fn insert(&mut self, provider_id: &str, frame: ContextFrame) {
        self.insert_declared(provider_id, frame, None);
    }

    /// Hold `frame` as served by `provider_id`, whose own digest of it was
    /// `declared` (when the host repaired it): `verify` presents that one.
    pub fn insert_declared(
        &mut self,
        provider_id: &str,
        frame: ContextFrame,
        declared: Option<String>,
    ) {
        let id = frame.frame_id(provider_id);
        match declared {
            Some(d) => self.declared.insert(id.clone(), d),
            None => self.declared.remove(&id),
        };
        self.entries.insert(id, frame);
    }

    /// The identity `verify` presents to the provider for the held `id`:
    /// with the provider's own digest when the host repaired it.
    pub fn wire_id(&self, id: &FrameId) -> FrameId {
        match self.declared.get(id) {
            Some(d) => FrameId {
                content_digest: Some(d.clone()),
                ..id.clone()
            },
            None => id.clone(),
        }
    }

    /// The held frame with this identity.
    pub fn get(&self, id: &FrameId) -> Option<&ContextFrame> {
        self.entries.get(id)
    }

    /// How many frames are held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The held identities, in canonical order.
    pub fn ids(&self) -> impl Iterator<Item = &FrameId> {
        self.entries.keys()
    }
}

impl Host {
    /// Revalidate every held frame; afterwards the cache holds exactly the
    /// frames some provider confirmed `valid` (V3).
    pub async fn revalidate(
        &self,
        cache: &mut FrameCache,
        timeout: Duration,
    ) -> RevalidationReport {
        let deadline = Instant::now() + timeout;
        let mut report = RevalidationReport::default();
        // Per provider, the held identities and what to present for each.
        let mut by_provider: BTreeMap<String, Vec<(FrameId, FrameId)>> = BTreeMap::new();
        for id in cache.entries.keys() {
            if id.is_verifiable() {
                by_provider
                    .entry(id.provider_id.clone())
                    .or_default()
                    .push((id.clone(), cache.wire_id(id)));
            } else {
                report.evicted.push((id.clone(), EvictionReason::NoDigest));
            }
        }
        let (ledger, _) = self.ledger();
        let ledger = Arc::new(ledger);
        let mut set = JoinSet::new();
        // One verify request per batch of at most MAX_VERIFY_FRAMES: a
        // provider answers a longer one with `bad_request` (bounded work).
        let batches = by_provider.into_iter().flat_map(|(provider, mut ids)| {
            let mut out = Vec::new();
            while ids.len() > MAX_VERIFY_FRAMES {
                let rest = ids.split_off(MAX_VERIFY_FRAMES);
                out.push((provider.clone(), std::mem::replace(&mut ids, rest)));
            }
            out.push((provider, ids));
            out
        });
        for (provider, ids) in batches {
            let Some(client) = self.client(&provider) else {
                report.evicted.extend(
                    ids.into_iter()
                        .map(|(id, _)| (id, EvictionReason::UnknownProvider)),
                );
                continue;
            };
            let ledger = Arc::clone(&ledger);
            set.spawn(async move {
                let fail_all = |ids: Vec<(FrameId, FrameId)>, reason: EvictionReason| {
                    ids.into_iter()
                        .map(|(id, _)| (id, Err(reason.clone())))
                        .collect::<Vec<_>>()
                };
                let descriptor = match client.ready(deadline).await {
                    Ok(d) => d,
                    Err(e) => {
                        return fail_all(
                            ids,
                            EvictionReason::VerifyFailed {
                                detail: e.to_string(),
                            },
                        )
                    }
                };
                if !descriptor.capabilities.verify {
                    return fail_all(ids, EvictionReason::ProviderCannotVerify);
                }
                let decision = consent::check(&descriptor, &ledger, Timestamp::now());
                if !decision.is_allowed() {
                    return fail_all(
                        ids,
                        EvictionReason::VerifyFailed {
                            detail: "consent is no longer in force for this provider".to_owned(),
                        },
                    );
                }
                let request = VerifyRequest {
                    frames: ids.iter().map(|(_, wire)| wire.clone()).collect(),
                };
                match client.verify(&request, deadline).await {
                    Ok(Answer::Verified(response)) => ids
                        .into_iter()
                        .map(|(id, wire)| {
                            let verdict = response.verdict_for(&wire);
                            let outcome = match verdict {
                                Verdict::Valid => Ok(()),
                                Verdict::Stale { replacement_digest } => {
                                    Err(EvictionReason::Stale { replacement_digest })
                                }
                                Verdict::Gone => Err(EvictionReason::Gone),
                                Verdict::Unknown => Err(EvictionReason::Unknown),
                            };
                            (id, outcome)
                        })
                        .collect(),
                    Ok(Answer::Error { code, message }) => fail_all(
                        ids,
                        EvictionReason::VerifyFailed {
                            detail: format!(
                                "error {}: {message}",
                                contextgraph_types::ErrorCode::effective(code.as_ref())
                            ),
                        },
                    ),
                    Ok(Answer::Frames(_)) => fail_all(
                        ids,
                        EvictionReason::VerifyFailed {
                            detail: "answered verify with frames".to_owned(),
                        },
                    ),
                    Err(e) => fail_all(
                        ids,
                        EvictionReason::VerifyFailed {
                            detail: e.to_string(),
                        },
                    ),
                }
            });
        }
        while let Some(joined) = set.join_next().await {
            let Ok(results) = joined else { continue };
            for (id, outcome) in results {
                match outcome {
                    Ok(()) => report.reusable.push(id),
                    Err(reason) => report.evicted.push((id, reason)),
                }
            }
        }
        for (id, _) in &report.evicted {
            cache.entries.remove(id);
            cache.declared.remove(id);
        }
        // Anything neither confirmed nor evicted (a panicked task) is evicted too.
        let confirmed: std::collections::BTreeSet<&FrameId> = report.reusable.iter().collect();
        let leftovers: Vec<FrameId> = cache
            .entries
            .keys()
            .filter(|id| !confirmed.contains(id))
            .cloned()
            .collect();
        for id in leftovers {
            cache.entries.remove(&id);
            cache.declared.remove(&id);
            report.evicted.push((
                id,
                EvictionReason::VerifyFailed {
                    detail: "revalidation did not complete".to_owned(),
                },
            ));
        }
        report.reusable.sort();
        report.evicted.sort_by(|a, b| a.0.cmp(&b.0));
        report
    }
}
