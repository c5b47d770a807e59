//! The composition pipeline: per-frame checks, dedup, budget split,
//! packing, placement, fencing, and the audit of all of it.

use contextgraph_types::{
    token_cost_for, token_cost_of_len, ContextFrame, FrameId, FrameKind, Provenance, ProviderUsage,
    Representation, ServedFrame, UsageReport,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::BuildHasherDefault;
use std::num::NonZeroUsize;

use crate::audit::{
    Audit, BudgetAudit, DuplicateBasis, Exclusion, FrameAudit, FrameStatus, Inclusion,
    OutcomeAudit, ProviderAudit,
};
use crate::budget::{water_fill, Budget, Claim};
use crate::dedup::{group, regions_of, Candidate, Declared, Region};
use crate::fence::{
    block_len_lower_bound, block_len_without_content, escaped_content_len, render_prompt,
    FenceAttributes, BLOCK_SEPARATOR, PREAMBLE,
};
use crate::hash::ContentSha256;
use crate::keys::{Keyer, PassThrough};
use crate::labels::{disambiguate, raw_label, LabelRequest};
use crate::outcome::{ProviderOutcome, ProviderStatus, ViolationRecord};
use crate::parallel::Workers;
use crate::placement::{edges_first, Placement};

/// How to compose.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The one budget for the whole prompt (preamble, fences and content).
    pub budget: Budget,
    /// Stable (byte-identical, canonical order) or ranked (best at the edges).
    pub placement: Placement,
    /// Per-provider weights for the budget split; absent providers weigh 1.
    pub weights: BTreeMap<String, u32>,
    /// The instant retrieval was pinned to, copied into the usage report.
    pub as_of: Option<String>,
    /// Threads for the per-frame passes (checks and SHA-256 of every
    /// candidate): `None` uses what the machine offers (at most 8). The
    /// result is identical for any value; only the time it takes changes.
    pub threads: Option<NonZeroUsize>,
}

impl Options {
    /// Stable placement, equal weights, no `as_of`.
    pub fn new(budget: Budget) -> Self {
        Options {
            budget,
            placement: Placement::Stable,
            weights: BTreeMap::new(),
            as_of: None,
            threads: None,
        }
    }

    /// The same options with another placement.
    pub fn with_placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// The same options with `provider_id` weighing `weight` in the split.
    pub fn with_weight(mut self, provider_id: impl Into<String>, weight: u32) -> Self {
        self.weights.insert(provider_id.into(), weight);
        self
    }

    /// The same options with an `as_of` for the usage report.
    pub fn with_as_of(mut self, as_of: impl Into<String>) -> Self {
        self.as_of = Some(as_of.into());
        self
    }

    /// The same options with at most `threads` threads for the per-frame
    /// passes (0 is taken as 1: everything on the calling thread).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = Some(NonZeroUsize::new(threads).unwrap_or(NonZeroUsize::MIN));
        self
    }

    fn weight_of(&self, provider_id: &str) -> u32 {
        self.weights.get(provider_id).copied().unwrap_or(1)
    }
}

/// Turns a `reference` frame (P3) back into content. A host that cannot
/// resolve references passes nothing ([`compose`]) and such frames are
/// reported as unresolvable. Rehydrated bytes are accepted only if they hash
/// to the frame's `canonical_content_hash`.
pub trait Rehydrate {
    /// The full content behind `frame`, served by `provider_id`, if the host can get it.
    fn rehydrate(&self, provider_id: &str, frame: &ContextFrame) -> Option<String>;
}

struct NoRehydration;

impl Rehydrate for NoRehydration {
    fn rehydrate(&self, _: &str, _: &ContextFrame) -> Option<String> {
        None
    }
}

/// How the model can cite a frame, and what the citation stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    /// The label, unique in the prompt, exactly as the `label` attribute
    /// holds it (unescaped).
    pub label: String,
    /// The frame rendered under this label (A1 attribution handle).
    pub frame: FrameId,
    /// The union of the provenance of the frame and of every duplicate merged into it.
    pub provenance: Vec<Provenance>,
    /// The duplicates merged into it, in canonical order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<FrameId>,
}

/// The result of composing: the prompt block, its citation map, the audit
/// and the UR1 usage report. See the crate docs for the JSON shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Composition {
    /// The fenced prompt block ([`crate::fence`] format); empty if no frame fit.
    pub prompt: String,
    /// One citation per block, in prompt order.
    pub citations: Vec<Citation>,
    /// What happened to every provider and every offered frame.
    pub audit: Audit,
    /// UR1: `budget_consumed` = Σ recomputed `token_cost` of the included frames.
    pub usage: UsageReport,
}

/// A composition the host asked for cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComposeError {
    /// Two outcomes name the same provider: FrameIds would be ambiguous (A1).
    DuplicateProvider {
        /// The provider id given twice.
        provider_id: String,
    },
}

impl fmt::Display for ComposeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComposeError::DuplicateProvider { provider_id } => write!(
                f,
                "provider {provider_id:?} has two outcomes: FrameIds would be ambiguous (A1); \
                 pass one outcome per provider id"
            ),
        }
    }
}

impl std::error::Error for ComposeError {}

/// Compose `outcomes` into a prompt under `options`, without rehydrating
/// reference frames. See [`compose_with`].
pub fn compose(
    outcomes: &[ProviderOutcome],
    options: &Options,
) -> Result<Composition, ComposeError> {
    compose_with(outcomes, options, &NoRehydration)
}

/// Compose `outcomes` into a prompt under `options`.
///
/// The result depends only on the set of frames and outcomes, never on the
/// order they are given in, and the same input always yields the same bytes.
/// Linear in the total content size (every candidate is hashed once), plus
/// `O(n log n)` sorting in the number of frames.
pub fn compose_with(
    outcomes: &[ProviderOutcome],
    options: &Options,
    rehydrator: &dyn Rehydrate,
) -> Result<Composition, ComposeError> {
    let providers = providers_in_order(outcomes)?;
    let keyer = Keyer::new();
    let offered: usize = providers.iter().map(|p| p.offered_frames().len()).sum();
    let mut entries: Vec<FrameAudit> = Vec::with_capacity(offered);
    let mut regions: Vec<Region<'_>> = Vec::new();
    let workers = Workers::new(options.threads);
    let candidates = candidates(
        &providers,
        rehydrator,
        &keyer,
        workers,
        &mut entries,
        &mut regions,
    );
    let groups = group(&candidates, &regions);
    let n_groups = groups.groups.len();

    // Labels are settled over every group, before packing, so that a block's
    // size (and so its charge) is known exactly and depends only on the set.
    let requests: Vec<LabelRequest<'_>> = groups
        .groups
        .iter()
        .map(|(_, rep)| {
            let c = &candidates[*rep];
            LabelRequest {
                raw: c.label,
                provider_id: c.provider_id,
                frame_id: &c.frame.id,
            }
        })
        .collect();
    let labels = disambiguate(&requests, &keyer);
    let attributes: Vec<FenceAttributes<'_>> = groups
        .groups
        .iter()
        .zip(&labels)
        .map(|((_, rep), label)| {
            let c = &candidates[*rep];
            FenceAttributes {
                provider: c.provider_id,
                id: &c.frame.id,
                kind: c.frame.kind.as_str(),
                label,
                title: &c.frame.title,
            }
        })
        .collect();

    // Charges: a lower bound from the unescaped sizes (no scan), the exact
    // escaped size only for blocks that might fit.
    let rep_body = |g: usize| candidates[groups.groups[g].1].body.as_ref();
    let lower_bound: Vec<u32> = (0..n_groups)
        .map(|g| {
            token_cost_of_len(
                block_len_lower_bound(&attributes[g], rep_body(g).len()) + BLOCK_SEPARATOR.len(),
            )
        })
        .collect();

    // Global budget, preamble reserved, split by water-filling on demand.
    let requested = options.budget.in_budget_tokens();
    let preamble = token_cost_of_len(PREAMBLE.len());
    let capacity = requested.saturating_sub(preamble);
    let group_provider = |g: usize| candidates[groups.groups[g].1].provider;
    let mut demand = vec![0u64; providers.len()];
    for (g, lb) in lower_bound.iter().enumerate() {
        demand[group_provider(g)] += u64::from(*lb);
    }
    let weights: Vec<u32> = providers
        .iter()
        .map(|p| options.weight_of(&p.provider_id))
        .collect();
    let claims: Vec<Claim> = weights
        .iter()
        .zip(&demand)
        .map(|(&weight, &demand)| Claim { weight, demand })
        .collect();
    let shares = water_fill(capacity, &claims);

    // Priority: canonical order (stable), or score then canonical (ranked).
    let mut priority: Vec<usize> = (0..n_groups).collect();
    if options.placement == Placement::Ranked {
        let score = |g: usize| candidates[groups.groups[g].1].score;
        priority.sort_by(|&a, &b| score(b).total_cmp(&score(a)).then(a.cmp(&b)));
    }

    let Packing {
        included,
        charge,
        used_by,
        room,
    } = pack(
        &lower_bound,
        |g| {
            token_cost_of_len(
                block_len_without_content(&attributes[g])
                    + escaped_content_len(rep_body(g))
                    + BLOCK_SEPARATOR.len(),
            )
        },
        group_provider,
        &shares,
        &priority,
        capacity,
    );

    // Placement.
    let in_priority: Vec<usize> = priority.iter().copied().filter(|&g| included[g]).collect();
    let placed: Vec<usize> = match options.placement {
        Placement::Stable => (0..n_groups).filter(|&g| included[g]).collect(),
        Placement::Ranked => edges_first(in_priority),
    };
    let prompt = render_prompt(placed.iter().map(|&g| (attributes[g], rep_body(g))));
    let mut position = vec![u32::MAX; n_groups];
    for (at, &g) in placed.iter().enumerate() {
        position[g] = u32::try_from(at).unwrap_or(u32::MAX);
    }

    let citations: Vec<Citation> = placed
        .iter()
        .map(|&g| citation(&candidates, &groups.members, &groups.groups[g], &labels[g]))
        .collect();

    // Budget totals.
    let blocks: u32 = used_by.iter().sum();
    let used = if placed.is_empty() {
        0
    } else {
        preamble + blocks
    };
    let content: u64 = placed
        .iter()
        .map(|&g| u64::from(candidates[groups.groups[g].1].cost))
        .sum();

    // Usage report (UR1): served = the rendered frames, billed at recomputed cost.
    let mut served: Vec<Vec<ServedFrame>> = vec![Vec::new(); providers.len()];
    for g in (0..n_groups).filter(|&g| included[g]) {
        let c = &candidates[groups.groups[g].1];
        served[c.provider].push(ServedFrame {
            frame: c.id.clone(),
            token_cost: c.cost,
        });
    }

    // Frame entries for every candidate: included, over budget, or duplicate.
    let mut group_of = vec![0usize; candidates.len()];
    for (g, (range, _)) in groups.groups.iter().enumerate() {
        for &m in &groups.members[range.clone()] {
            group_of[m] = g;
        }
    }
    let basis_of = |i: usize, rep: usize| {
        if candidates[i].sha == candidates[rep].sha {
            DuplicateBasis::SameContent
        } else {
            DuplicateBasis::OverlappingRegion
        }
    };
    let mut statuses = Vec::with_capacity(candidates.len());
    for (i, &g) in group_of.iter().enumerate() {
        let rep = groups.groups[g].1;
        let status = if i != rep {
            FrameStatus::Excluded(Exclusion::Duplicate {
                of: candidates[rep].id.clone(),
                basis: basis_of(i, rep),
            })
        } else if included[g] {
            FrameStatus::Included(Inclusion {
                label: labels[g].to_string(),
                position: position[g],
                charge: charge[g].unwrap_or(lower_bound[g]),
            })
        } else {
            FrameStatus::Excluded(Exclusion::OverBudget {
                charge: charge[g].unwrap_or(lower_bound[g]),
                remaining: room,
            })
        };
        statuses.push(status);
    }
    // `entries` holds the frames excluded before dedup, in push order; the
    // candidates are in canonical order already and share no (provider, id)
    // with them. Sorting the few early ones and merging gives the canonical
    // order without comparing the many candidates' strings.
    let canonical = |a: &FrameAudit, b: &FrameAudit| {
        (&a.frame, &a.content_sha256, a.token_cost).cmp(&(
            &b.frame,
            &b.content_sha256,
            b.token_cost,
        ))
    };
    let mut early = entries;
    early.sort_by(canonical);
    let mut entries: Vec<FrameAudit> = Vec::with_capacity(early.len() + candidates.len());
    let mut early = early.into_iter().peekable();
    for (c, status) in candidates.into_iter().zip(statuses) {
        let entry = FrameAudit {
            frame: c.id,
            content_sha256: Some(c.sha),
            token_cost: c.cost,
            status,
        };
        while let Some(e) = early.next_if(|e| canonical(e, &entry).is_lt()) {
            entries.push(e);
        }
        entries.push(entry);
    }
    entries.extend(early);

    let mut provider_audits = Vec::with_capacity(providers.len());
    let mut usage = Vec::with_capacity(providers.len());
    for (p, (outcome, served)) in providers.iter().zip(served).enumerate() {
        let offered = u32::try_from(outcome.offered_frames().len()).unwrap_or(u32::MAX);
        let included_here = u32::try_from(served.len()).unwrap_or(u32::MAX);
        provider_audits.push(ProviderAudit {
            provider_id: outcome.provider_id.clone(),
            outcome: outcome_audit(&outcome.status),
            weight: weights[p],
            demand: demand[p],
            share: shares[p],
            used: used_by[p],
            frames_offered: offered,
            frames_included: included_here,
        });
        usage.push(ProviderUsage {
            provider_id: outcome.provider_id.clone(),
            frames_rejected: offered.saturating_sub(included_here),
            served_frames: served,
            ..ProviderUsage::default()
        });
    }

    Ok(Composition {
        prompt,
        citations,
        audit: Audit {
            placement: options.placement,
            budget: BudgetAudit {
                given: options.budget,
                requested,
                preamble,
                used,
                content,
                remaining: requested - used,
            },
            providers: provider_audits,
            frames: entries,
        },
        usage: UsageReport::from_providers(requested, options.as_of.clone(), usage),
    })
}

/// What packing decided, per group and per provider.
struct Packing {
    /// Whether each group's block is in the prompt.
    included: Vec<bool>,
    /// Each group's exact charge, where it was worth computing.
    charge: Vec<Option<u32>>,
    /// Charged per provider.
    used_by: Vec<u32>,
    /// Budget tokens left for blocks at the end.
    room: u32,
}

/// Pack groups (in `priority` order) under `capacity`: first each provider
/// within its share, then whatever is left from any provider, so unused
/// shares are not wasted. A block is tried only if its `lower_bound` fits,
/// and its `exact` charge (which scans the content) is computed at most once.
fn pack(
    lower_bound: &[u32],
    exact: impl Fn(usize) -> u32,
    provider_of: impl Fn(usize) -> usize,
    shares: &[u32],
    priority: &[usize],
    capacity: u32,
) -> Packing {
    let mut included = vec![false; lower_bound.len()];
    let mut charge: Vec<Option<u32>> = vec![None; lower_bound.len()];
    let mut used_by = vec![0u32; shares.len()];
    let mut try_include = |g: usize, room: &mut u32, included: &mut [bool]| -> Option<u32> {
        if lower_bound[g] > *room {
            return None;
        }
        let c = *charge[g].get_or_insert_with(|| exact(g));
        if c > *room {
            return None;
        }
        *room -= c;
        included[g] = true;
        Some(c)
    };
    let mut room_by = shares.to_vec();
    for &g in priority {
        let p = provider_of(g);
        if let Some(c) = try_include(g, &mut room_by[p], &mut included) {
            used_by[p] += c;
        }
    }
    // Shares sum to at most `capacity`, and each provider used at most its share.
    let mut room = capacity.saturating_sub(used_by.iter().sum::<u32>());
    for &g in priority {
        if !included[g] {
            if let Some(c) = try_include(g, &mut room, &mut included) {
                used_by[provider_of(g)] += c;
            }
        }
    }
    Packing {
        included,
        charge,
        used_by,
        room,
    }
}

/// The outcomes sorted by provider id, refusing duplicate ids.
fn providers_in_order(outcomes: &[ProviderOutcome]) -> Result<Vec<&ProviderOutcome>, ComposeError> {
    let mut providers: Vec<&ProviderOutcome> = outcomes.iter().collect();
    providers.sort_by(|a, b| a.provider_id.cmp(&b.provider_id));
    if let Some(pair) = providers
        .windows(2)
        .find(|w| w[0].provider_id == w[1].provider_id)
    {
        return Err(ComposeError::DuplicateProvider {
            provider_id: pair[0].provider_id.clone(),
        });
    }
    Ok(providers)
}

/// Apply the per-frame checks to every offered frame: frames that fail get
/// their audit entry in `entries` now; the rest come back as candidates,
/// sorted canonically, with content hashed, declared digests checked (D1),
/// costs recomputed, and their `file` regions in `regions`.
///
/// The per-frame work runs on `workers` in contiguous chunks of the
/// canonical order (see [`crate::parallel`]) and chunk results are merged in
/// order, so the candidates are the same for any number of threads.
fn candidates<'a>(
    providers: &[&'a ProviderOutcome],
    rehydrator: &dyn Rehydrate,
    keyer: &Keyer,
    workers: Workers,
    entries: &mut Vec<FrameAudit>,
    regions: &mut Vec<Region<'a>>,
) -> Vec<Candidate<'a>> {
    let mut offered: Vec<(usize, &'a ContextFrame)> = Vec::new();
    for (p, outcome) in providers.iter().enumerate() {
        match &outcome.status {
            ProviderStatus::Accepted { frames } => offered.extend(frames.iter().map(|f| (p, f))),
            ProviderStatus::Quarantined { frames, violations } => {
                let anchors = distinct_anchors(violations.iter().map(|v| v.anchor.as_str()));
                for f in frames {
                    entries.push(excluded_early(
                        f,
                        &outcome.provider_id,
                        Exclusion::ProviderQuarantined {
                            anchors: anchors.clone(),
                        },
                    ));
                }
            }
            _ => {}
        }
    }
    // D2: one id, one frame. A provider serving an id twice loses all copies,
    // which keeps the outcome independent of which copy arrived first.
    offered.sort_by(|a, b| (a.0, &a.1.id).cmp(&(b.0, &b.1.id)));
    let mut jobs: Vec<Job<'a>> = Vec::with_capacity(offered.len());
    let mut k = 0;
    while k < offered.len() {
        let (p, frame) = offered[k];
        let mut end = k + 1;
        while end < offered.len() && offered[end].0 == p && offered[end].1.id == frame.id {
            end += 1;
        }
        let provider_id = providers[p].provider_id.as_str();
        if end - k > 1 {
            for &(_, f) in &offered[k..end] {
                entries.push(excluded_early(f, provider_id, Exclusion::DuplicateId));
            }
        } else {
            jobs.push(Job {
                provider: p,
                provider_id,
                frame,
            });
        }
        k = end;
    }
    drop(offered);

    // Checks and metadata, in parallel chunks. Reference frames are left
    // to the merge: rehydration is the host's, called from this thread only,
    // in canonical order.
    let built = workers.map_chunks(
        &jobs,
        |job| 256 + job.frame.content.as_ref().map_or(0, |c| c.len() / 32),
        |_, chunk| build_chunk(chunk, keyer),
    );
    let mut out: Vec<Candidate<'a>> = Vec::with_capacity(jobs.len());
    let mut fingerprints: Vec<u64> = Vec::with_capacity(jobs.len());
    let mut position = vec![usize::MAX; jobs.len()];
    let mut chunk_regions = Vec::with_capacity(built.len());
    let mut first_job = 0;
    for chunk in built {
        let n_jobs = chunk.slots.len();
        for (slot, (j, job)) in chunk
            .slots
            .into_iter()
            .zip(jobs.iter().enumerate().skip(first_job))
        {
            let result = match slot {
                Slot::Built(c, fingerprint) => Ok((c, fingerprint)),
                // Hashed when rehydrated: never a hashing job, so no fingerprint.
                Slot::Reference => reference_candidate(job, rehydrator, keyer).map(|c| (c, 0)),
                Slot::Failed(reason) => Err(reason),
            };
            match result {
                Ok((c, fingerprint)) => {
                    position[j] = out.len();
                    out.push(c);
                    fingerprints.push(fingerprint);
                }
                Err(reason) => {
                    entries.push(excluded_early(job.frame, job.provider_id, reason));
                }
            }
        }
        chunk_regions.push((first_job, chunk.regions));
        first_job += n_jobs;
    }
    regions.reserve(chunk_regions.iter().map(|(_, r)| r.len()).sum());
    for (first_job, rs) in chunk_regions {
        for mut r in rs {
            let at = position[first_job + r.candidate];
            if at != usize::MAX {
                r.candidate = at;
                regions.push(r);
            }
        }
    }

    let shas = hash_contents(&out, &fingerprints, workers);
    let mut mismatched = Vec::new();
    for (i, (c, hashed)) in out.iter_mut().zip(shas).enumerate() {
        if let Some(sha) = hashed {
            c.sha = sha;
            // D1 on the digest parsed while building (32 bytes, in cache).
            if c.declared.contradicts(&c.sha) {
                mismatched.push(i);
            }
        }
    }
    if mismatched.is_empty() {
        // The common case: nothing to take out, no index to remap.
        return out;
    }
    let mut kept = Vec::with_capacity(out.len());
    let mut new_index = vec![usize::MAX; out.len()];
    let mut next_mismatch = mismatched.into_iter().peekable();
    for (old, c) in out.into_iter().enumerate() {
        if next_mismatch.next_if_eq(&old).is_some() {
            let status = FrameStatus::Excluded(Exclusion::DigestMismatch {
                declared: c.id.content_digest.clone().unwrap_or_default(),
                actual: c.sha.to_string(),
            });
            entries.push(FrameAudit {
                frame: c.id,
                content_sha256: Some(c.sha),
                token_cost: c.cost,
                status,
            });
            continue;
        }
        new_index[old] = kept.len();
        kept.push(c);
    }
    regions.retain_mut(|r| {
        r.candidate = new_index[r.candidate];
        r.candidate != usize::MAX
    });
    // Already in (provider id, frame id) order, which is canonical FrameId
    // order now that ids are unique per provider.
    kept
}

/// One offered frame with a unique id, to be checked.
struct Job<'a> {
    provider: usize,
    provider_id: &'a str,
    frame: &'a ContextFrame,
}

/// What the parallel pass made of one job.
enum Slot<'a> {
    /// An inline candidate (content not hashed yet) and its content fingerprint.
    Built(Candidate<'a>, u64),
    /// A reference frame: built by the merge, which rehydrates it.
    Reference,
    /// Excluded by a per-frame check.
    Failed(Exclusion),
}

/// The parallel pass's output for one chunk of jobs.
struct BuiltChunk<'a> {
    /// One slot per job, in order.
    slots: Vec<Slot<'a>>,
    /// The `file` regions of the chunk's jobs, `candidate` being the job's
    /// index within the chunk (remapped by the merge).
    regions: Vec<Region<'a>>,
}

fn build_chunk<'a>(jobs: &[Job<'a>], keyer: &Keyer) -> BuiltChunk<'a> {
    let mut slots = Vec::with_capacity(jobs.len());
    let mut regions = Vec::with_capacity(jobs.len());
    for (j, job) in jobs.iter().enumerate() {
        let slot = if let FrameKind::Other(kind) = &job.frame.kind {
            Slot::Failed(Exclusion::UnknownKind { kind: kind.clone() })
        } else if job.frame.representation == Representation::Reference {
            Slot::Reference
        } else if let Some(text) = job.frame.content.as_deref() {
            // Hashed (and D1-checked) in `hash_contents`.
            let c = candidate(job, Cow::Borrowed(text), ContentSha256([0; 32]), keyer);
            let fingerprint = fingerprint(text, &c.declared, keyer);
            Slot::Built(c, fingerprint)
        } else {
            Slot::Failed(Exclusion::NoContent)
        };
        if !matches!(slot, Slot::Failed(_)) {
            regions_of(job.frame, j, keyer, &mut regions);
        }
        slots.push(slot);
    }
    BuiltChunk { slots, regions }
}

/// A reference frame (P3) as a candidate: it carries no content, and only
/// rehydrated bytes that hash to its `canonical_content_hash` give it one.
fn reference_candidate<'a>(
    job: &Job<'a>,
    rehydrator: &dyn Rehydrate,
    keyer: &Keyer,
) -> Result<Candidate<'a>, Exclusion> {
    let Some(text) = rehydrator.rehydrate(job.provider_id, job.frame) else {
        return Err(Exclusion::UnresolvableReference {
            detail: "the host could not rehydrate it".to_owned(),
        });
    };
    let sha = ContentSha256::of(text.as_bytes());
    match job.frame.canonical_content_hash.as_deref() {
        Some(declared) if sha.matches(declared) => {}
        Some(declared) => {
            return Err(Exclusion::UnresolvableReference {
                detail: format!(
                "the rehydrated bytes hash to {sha}, not to its canonical_content_hash {declared}"
            ),
            })
        }
        None => {
            return Err(Exclusion::UnresolvableReference {
                detail: "it has no canonical_content_hash to check rehydrated bytes against"
                    .to_owned(),
            })
        }
    }
    Ok(candidate(job, Cow::Owned(text), sha, keyer))
}

fn candidate<'a>(
    job: &Job<'a>,
    body: Cow<'a, str>,
    sha: ContentSha256,
    keyer: &Keyer,
) -> Candidate<'a> {
    let frame = job.frame;
    let score = if frame.score.is_nan() {
        0.0
    } else {
        frame.score.clamp(0.0, 1.0)
    };
    let label = raw_label(
        frame.citation_label.as_deref(),
        &frame.title,
        &frame.id,
        job.provider_id,
    );
    Candidate {
        id: frame.frame_id(job.provider_id),
        provider_id: job.provider_id,
        provider: job.provider,
        label: keyer.key(label),
        frame,
        cost: token_cost_of_len(body.len()),
        declared: Declared::parse(frame.content_digest.as_deref()),
        body,
        sha,
        score,
    }
}

/// A cheap, keyed fingerprint of content: its length and its declared
/// digest, or, without a well-formed declaration, its first and last 16
/// bytes. Byte-identical contents declared alike share a fingerprint, which
/// is all the hashing pass needs to find repeats; it is a hint only, and
/// [`hash_contents`] compares the bytes before reusing a digest (a provider
/// declaring another frame's digest gains nothing but a failed comparison).
fn fingerprint(text: &str, declared: &Declared, keyer: &Keyer) -> u64 {
    let bytes = text.as_bytes();
    match declared {
        // Honest providers declare digests: no need to touch the content yet.
        Declared::Digest(d) => keyer.hash_parts(bytes.len(), &d.0, &[]),
        _ => {
            let edge = bytes.len().min(16);
            keyer.hash_parts(bytes.len(), &bytes[..edge], &bytes[bytes.len() - edge..])
        }
    }
}

/// The SHA-256 of every inline candidate's content (`None` for rehydrated
/// ones, hashed already), in parallel chunks. Content byte-identical to an
/// earlier candidate's (same fingerprint, then compared byte for byte, so
/// nothing a provider declares is trusted) is not hashed again: it gets
/// that candidate's digest, which is the digest it would have computed.
fn hash_contents(
    candidates: &[Candidate<'_>],
    fingerprints: &[u64],
    workers: Workers,
) -> Vec<Option<ContentSha256>> {
    // Each candidate is compared with the first one of its fingerprint at
    // most, so hostile look-alikes cost one comparison each, never more.
    let mut first: HashMap<u64, usize, BuildHasherDefault<PassThrough>> =
        HashMap::with_capacity_and_hasher(candidates.len(), Default::default());
    let mut same_as = vec![usize::MAX; candidates.len()];
    for (i, c) in candidates.iter().enumerate() {
        if matches!(c.body, Cow::Borrowed(_)) {
            let j = *first.entry(fingerprints[i]).or_insert(i);
            if j != i {
                same_as[i] = j;
            }
        }
    }
    let hashed = workers.map_chunks(
        candidates,
        |c| c.body.len(),
        |start, chunk| {
            let mut out: Vec<Hashed> = Vec::with_capacity(chunk.len());
            for (n, c) in chunk.iter().enumerate() {
                if let Some(next) = chunk.get(n + TOUCH_AHEAD) {
                    touch(next.body.as_bytes());
                }
                out.push(match c.body {
                    Cow::Owned(_) => Hashed::Already,
                    Cow::Borrowed(text) => {
                        let j = same_as[start + n];
                        if j != usize::MAX && candidates[j].body.as_bytes() == text.as_bytes() {
                            Hashed::SameAs(j)
                        } else {
                            Hashed::Digest(ContentSha256::of(text.as_bytes()))
                        }
                    }
                });
            }
            out
        },
    );
    let mut shas: Vec<Option<ContentSha256>> = Vec::with_capacity(candidates.len());
    for h in hashed.into_iter().flatten() {
        let sha = match h {
            Hashed::Already => None,
            Hashed::Digest(sha) => Some(sha),
            // `j` is the first candidate of its fingerprint, so it was hashed
            // itself, and it comes earlier.
            Hashed::SameAs(j) => shas[j],
        };
        shas.push(sha);
    }
    shas
}

/// The hashing pass's result for one candidate.
enum Hashed {
    /// Rehydrated: hashed when checked against its canonical hash.
    Already,
    /// The SHA-256 of its content.
    Digest(ContentSha256),
    /// Byte-identical to this earlier candidate's content.
    SameAs(usize),
}

/// How many frames ahead of the one being hashed [`touch`] reads.
const TOUCH_AHEAD: usize = 4;

/// Read one byte of every cache line of `bytes`. The reads are independent,
/// so the memory system fetches the lines in parallel while the previous
/// frame is being hashed, instead of one miss at a time once hashing reaches
/// them (a safe stand-in for a prefetch; content is cold in a large composition).
fn touch(bytes: &[u8]) {
    let sum = bytes
        .iter()
        .step_by(64)
        .fold(0u8, |acc, &b| acc.wrapping_add(b));
    std::hint::black_box(sum);
}

/// The audit entry of a frame excluded before it was hashed.
fn excluded_early(frame: &ContextFrame, provider_id: &str, reason: Exclusion) -> FrameAudit {
    FrameAudit {
        frame: frame.frame_id(provider_id),
        content_sha256: None,
        token_cost: token_cost_for(frame.content.as_deref()),
        status: FrameStatus::Excluded(reason),
    }
}

fn distinct_anchors<'a>(anchors: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = anchors.map(str::to_owned).collect();
    out.sort();
    out.dedup();
    out
}

fn outcome_audit(status: &ProviderStatus) -> OutcomeAudit {
    match status {
        ProviderStatus::Accepted { .. } => OutcomeAudit::Accepted,
        ProviderStatus::Quarantined { violations, .. } => OutcomeAudit::Quarantined {
            anchors: distinct_anchors(violations.iter().map(|v| v.anchor.as_str())),
            violations: violations.iter().map(ViolationRecord::from).collect(),
        },
        ProviderStatus::ConsentMissing { scopes } => OutcomeAudit::ConsentMissing {
            scopes: scopes.clone(),
        },
        ProviderStatus::TimedOut { after_ms } => OutcomeAudit::TimedOut {
            after_ms: *after_ms,
        },
        ProviderStatus::Crashed { detail } => OutcomeAudit::Crashed {
            detail: detail.clone(),
        },
        ProviderStatus::Error { code, message } => OutcomeAudit::Error {
            code: code.as_str().to_owned(),
            message: message.clone(),
        },
    }
}

/// The citation of a rendered group: its representative, the union of the
/// group's provenance (sorted, without repeats), and the merged duplicates.
fn citation(
    candidates: &[Candidate<'_>],
    members: &[usize],
    (range, rep): &(std::ops::Range<usize>, usize),
    label: &str,
) -> Citation {
    let members = &members[range.clone()];
    let mut provenance: Vec<&Provenance> = members
        .iter()
        .flat_map(|&m| &candidates[m].frame.provenance)
        .collect();
    provenance.sort_by(|a, b| provenance_key(a).cmp(&provenance_key(b)));
    provenance.dedup();
    Citation {
        label: label.to_owned(),
        frame: candidates[*rep].id.clone(),
        provenance: provenance.into_iter().cloned().collect(),
        merged: members
            .iter()
            .filter(|&&m| m != *rep)
            .map(|&m| candidates[m].id.clone())
            .collect(),
    }
}

type ProvenanceKey<'a> = (
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
);

fn provenance_key(p: &Provenance) -> ProvenanceKey<'_> {
    (
        &p.kind,
        p.uri.as_deref(),
        p.range.as_deref(),
        p.digest.as_deref(),
        p.method.as_deref(),
        p.by.as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_composition_is_empty_and_coherent() {
        let c = compose(&[], &Options::new(Budget::budget_tokens(100))).unwrap();
        assert_eq!(c.prompt, "");
        assert!(c.usage.is_coherent());
        assert_eq!(c.audit.budget.used, 0);
    }
}
