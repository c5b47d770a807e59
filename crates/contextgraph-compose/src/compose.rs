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
    block_len_lower_bound_of, block_len_without_content, escaped_content_len, render_prompt,
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
    // Frames of quarantined providers and ids served twice (usually none):
    // their entries are merged into canonical order at the end.
    let mut early: Vec<FrameAudit> = Vec::new();
    let mut regions: Vec<Region<'_>> = Vec::new();
    let workers = Workers::new(options.threads);
    let (mut entries, candidates) = candidates(
        &providers,
        rehydrator,
        &keyer,
        workers,
        &mut early,
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
    drop(requests);
    let attributes = |g: usize| {
        let c = &candidates[groups.groups[g].1];
        FenceAttributes {
            provider: c.provider_id,
            id: &c.frame.id,
            kind: c.frame.kind.as_str(),
            label: &labels[g],
            title: &c.frame.title,
        }
    };

    // Charges: a lower bound from the unescaped sizes (no scan, and no visit
    // to the frame: its fixed attributes were measured while building), the
    // exact escaped size only for blocks that might fit.
    let rep_body = |g: usize| candidates[groups.groups[g].1].body.as_ref();
    let lower_bound: Vec<u32> = (0..n_groups)
        .map(|g| {
            let c = &candidates[groups.groups[g].1];
            let values = c.attributes_len + labels[g].len();
            token_cost_of_len(
                block_len_lower_bound_of(values, c.body.len()) + BLOCK_SEPARATOR.len(),
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
    let priority: Vec<usize> = match options.placement {
        Placement::Stable => (0..n_groups).collect(),
        Placement::Ranked => {
            // Sort (score, group) pairs held side by side: a comparator that
            // looked each score up through the group table would miss the
            // cache on every comparison. Group indices are distinct, so an
            // unstable sort gives the same order as a stable one.
            let mut keyed: Vec<(f32, usize)> = (0..n_groups)
                .map(|g| (candidates[groups.groups[g].1].score, g))
                .collect();
            keyed.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            keyed.into_iter().map(|(_, g)| g).collect()
        }
    };

    let Packing {
        included,
        charge,
        used_by,
        room,
    } = pack(
        &lower_bound,
        |g| {
            token_cost_of_len(
                block_len_without_content(&attributes(g))
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
    let prompt = render_prompt(placed.iter().map(|&g| (attributes(g), rep_body(g))));
    let mut position = vec![u32::MAX; n_groups];
    for (at, &g) in placed.iter().enumerate() {
        position[g] = u32::try_from(at).unwrap_or(u32::MAX);
    }

    let citations: Vec<Citation> = placed
        .iter()
        .map(|&g| {
            citation(
                &candidates,
                &entries,
                &groups.members,
                &groups.groups[g],
                &labels[g],
            )
        })
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
            frame: entries[c.entry].frame.clone(),
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
    // Every candidate's entry gets its status: included, duplicate of its
    // group's representative, or over budget.
    for (i, &g) in group_of.iter().enumerate() {
        let (c, rep) = (&candidates[i], groups.groups[g].1);
        let status = if i != rep {
            let of = &candidates[rep];
            FrameStatus::Excluded(Exclusion::Duplicate {
                of: entries[of.entry].frame.clone(),
                basis: if c.sha == of.sha {
                    DuplicateBasis::SameContent
                } else {
                    DuplicateBasis::OverlappingRegion
                },
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
        entries[c.entry].status = status;
    }
    if !early.is_empty() {
        // `entries` is in canonical order and shares no (provider, id) with
        // the early ones: sort those few and merge.
        let canonical = |a: &FrameAudit, b: &FrameAudit| {
            (&a.frame, &a.content_sha256, a.token_cost).cmp(&(
                &b.frame,
                &b.content_sha256,
                b.token_cost,
            ))
        };
        early.sort_by(canonical);
        let mut early = early.into_iter().peekable();
        let mut merged: Vec<FrameAudit> = Vec::with_capacity(entries.len() + early.len());
        for entry in entries {
            while let Some(e) = early.next_if(|e| canonical(e, &entry).is_lt()) {
                merged.push(e);
            }
            merged.push(entry);
        }
        merged.extend(early);
        entries = merged;
    }

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

/// Apply the per-frame checks to every offered frame and give each one its
/// audit entry. Frames of quarantined providers and ids served twice get
/// theirs in `early` (in no particular order); every other frame gets one in
/// the returned entries, in canonical order: final for the frames that fail
/// a check, with its identity, cost and digest (but not its status yet) for
/// the candidates. Candidates come back sorted canonically, with content
/// hashed, declared digests checked (D1), costs recomputed, and their `file`
/// regions in `regions`.
///
/// The per-frame work runs on `workers` in contiguous chunks of the
/// canonical order (see [`crate::parallel`]) and chunk results are merged in
/// order, so the candidates are the same for any number of threads.
fn candidates<'a>(
    providers: &[&'a ProviderOutcome],
    rehydrator: &dyn Rehydrate,
    keyer: &Keyer,
    workers: Workers,
    early: &mut Vec<FrameAudit>,
    regions: &mut Vec<Region<'a>>,
) -> (Vec<FrameAudit>, Vec<Candidate<'a>>) {
    let mut offered: Vec<(usize, &'a ContextFrame)> = Vec::new();
    for (p, outcome) in providers.iter().enumerate() {
        match &outcome.status {
            ProviderStatus::Accepted { frames } => offered.extend(frames.iter().map(|f| (p, f))),
            ProviderStatus::Quarantined { frames, violations } => {
                let anchors = distinct_anchors(violations.iter().map(|v| v.anchor.as_str()));
                for f in frames {
                    early.push(excluded_early(
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
    // The sort compares ids, scattered on the heap: read them all first, in
    // a loop whose loads are independent, so that their misses overlap.
    let ids_touched = offered
        .iter()
        .fold(0u8, |acc, (_, f)| acc.wrapping_add(first_byte(&f.id)));
    std::hint::black_box(ids_touched);
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
                early.push(excluded_early(f, provider_id, Exclusion::DuplicateId));
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

    // Checks, metadata and audit entries, in parallel chunks. Reference
    // frames are left to the merge: rehydration is the host's, called from
    // this thread only, in canonical order.
    let n_jobs = jobs.len();
    let built = workers.map_chunks(
        &jobs,
        |job| 256 + job.frame.content.as_ref().map_or(0, |c| c.len() / 32),
        |start, chunk| build_chunk(start, chunk, n_jobs, keyer),
    );
    let mut built = built.into_iter();
    let Some(BuiltChunk {
        mut entries,
        mut candidates,
        mut fingerprints,
        references,
        regions: mut job_regions,
    }) = built.next()
    else {
        return (Vec::new(), Vec::new());
    };
    let mut references = references;
    for chunk in built {
        entries.extend(chunk.entries);
        candidates.extend(chunk.candidates);
        fingerprints.extend(chunk.fingerprints);
        references.extend(chunk.references);
        job_regions.extend(chunk.regions);
    }
    if !references.is_empty() {
        // Rehydrate in canonical order and put the survivors in their place.
        let inline = std::mem::take(&mut candidates);
        let inline_fingerprints = std::mem::take(&mut fingerprints);
        let mut inline = inline.into_iter().zip(inline_fingerprints).peekable();
        for j in references {
            while let Some((c, fingerprint)) = inline.next_if(|(c, _)| c.entry < j) {
                candidates.push(c);
                fingerprints.push(fingerprint);
            }
            let job = &jobs[j];
            match reference_candidate(j, job, rehydrator, keyer) {
                Ok(c) => {
                    let entry = &mut entries[j];
                    entry.token_cost = c.cost;
                    entry.content_sha256 = Some(c.sha);
                    candidates.push(c);
                    // Hashed when rehydrated: never a hashing job, so no fingerprint.
                    fingerprints.push(0);
                }
                Err(reason) => entries[j].status = FrameStatus::Excluded(reason),
            }
        }
        for (c, fingerprint) in inline {
            candidates.push(c);
            fingerprints.push(fingerprint);
        }
    }
    // Regions name jobs; candidates are numbered among themselves.
    let mut position = vec![usize::MAX; n_jobs];
    for (at, c) in candidates.iter().enumerate() {
        position[c.entry] = at;
    }
    regions.reserve(job_regions.len());
    regions.extend(job_regions.into_iter().filter_map(|mut r| {
        r.candidate = position[r.candidate];
        (r.candidate != usize::MAX).then_some(r)
    }));

    hash_contents(&mut candidates, &fingerprints, workers);
    let mut mismatched = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        // Rehydrated candidates were checked against their canonical hash.
        if matches!(c.body, Cow::Borrowed(_)) {
            entries[c.entry].content_sha256 = Some(c.sha);
            // D1 on the digest parsed while building (32 bytes, in cache).
            if c.declared.contradicts(&c.sha) {
                mismatched.push(i);
            }
        }
    }
    if mismatched.is_empty() {
        // The common case: nothing to take out, no index to remap.
        return (entries, candidates);
    }
    let mut kept = Vec::with_capacity(candidates.len());
    let mut new_index = vec![usize::MAX; candidates.len()];
    let mut next_mismatch = mismatched.into_iter().peekable();
    for (old, c) in candidates.into_iter().enumerate() {
        if next_mismatch.next_if_eq(&old).is_some() {
            entries[c.entry].status = FrameStatus::Excluded(Exclusion::DigestMismatch {
                declared: c.frame.content_digest.clone().unwrap_or_default(),
                actual: c.sha.to_string(),
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
    (entries, kept)
}

/// One offered frame with a unique id, to be checked.
struct Job<'a> {
    provider: usize,
    provider_id: &'a str,
    frame: &'a ContextFrame,
}

/// The parallel pass's output for one chunk of jobs.
struct BuiltChunk<'a> {
    /// One audit entry per job, in order: final for frames that failed a
    /// check, to be completed for the others.
    entries: Vec<FrameAudit>,
    /// The jobs' inline candidates (content not hashed yet), in order.
    candidates: Vec<Candidate<'a>>,
    /// Each candidate's content fingerprint.
    fingerprints: Vec<u64>,
    /// The (global) indices of the jobs that are reference frames: built by
    /// the merge, which rehydrates them.
    references: Vec<usize>,
    /// The `file` regions of the chunk's candidates and references,
    /// `candidate` being the (global) job index (remapped by the merge).
    regions: Vec<Region<'a>>,
}

/// The status a candidate's audit entry holds until packing has decided:
/// always overwritten (included, duplicate or over budget) before the
/// composition is returned.
fn undecided() -> FrameStatus {
    FrameStatus::Excluded(Exclusion::OverBudget {
        charge: 0,
        remaining: 0,
    })
}

/// The per-frame pass over one chunk of jobs, the first being job `start`
/// of `n_jobs`: checks (U2, P1), each job's audit entry, inline candidates
/// with their fingerprints, and `file` regions.
fn build_chunk<'a>(start: usize, jobs: &[Job<'a>], n_jobs: usize, keyer: &Keyer) -> BuiltChunk<'a> {
    // The first chunk's vectors become the whole lists: room for all.
    let room = if start == 0 { n_jobs } else { jobs.len() };
    let mut out = BuiltChunk {
        entries: Vec::with_capacity(room),
        candidates: Vec::with_capacity(room),
        fingerprints: Vec::with_capacity(room),
        references: Vec::new(),
        regions: Vec::with_capacity(jobs.len()),
    };
    for (n, job) in jobs.iter().enumerate() {
        if n % TOUCH_BATCH == 0 {
            // The next batch's misses all in flight at once, one wait for all.
            for ahead in jobs.iter().skip(n + TOUCH_BATCH).take(TOUCH_BATCH) {
                touch_metadata(ahead.frame);
            }
        }
        let j = start + n;
        let frame = job.frame;
        let mut entry = FrameAudit {
            frame: frame.frame_id(job.provider_id),
            content_sha256: None,
            token_cost: token_cost_for(frame.content.as_deref()),
            status: undecided(),
        };
        if let FrameKind::Other(kind) = &frame.kind {
            entry.status = FrameStatus::Excluded(Exclusion::UnknownKind { kind: kind.clone() });
        } else if frame.representation == Representation::Reference {
            out.references.push(j);
            regions_of(frame, j, keyer, &mut out.regions);
        } else if let Some(text) = frame.content.as_deref() {
            // Hashed (and D1-checked) in `hash_contents`.
            let c = candidate(j, job, Cow::Borrowed(text), ContentSha256([0; 32]), keyer);
            out.fingerprints.push(fingerprint(text, &c.declared, keyer));
            out.candidates.push(c);
            regions_of(frame, j, keyer, &mut out.regions);
        } else {
            entry.status = FrameStatus::Excluded(Exclusion::NoContent);
        }
        out.entries.push(entry);
    }
    out
}

/// A reference frame (P3) as a candidate: it carries no content, and only
/// rehydrated bytes that hash to its `canonical_content_hash` give it one.
fn reference_candidate<'a>(
    j: usize,
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
    Ok(candidate(j, job, Cow::Owned(text), sha, keyer))
}

fn candidate<'a>(
    entry: usize,
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
    // The unescaped size of the attribute values other than the label.
    let attributes_len =
        job.provider_id.len() + frame.id.len() + frame.kind.as_str().len() + frame.title.len();
    Candidate {
        entry,
        attributes_len,
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

/// Set the SHA-256 of every inline candidate's content (rehydrated ones
/// were hashed already), computed in parallel chunks. Content
/// byte-identical to an earlier candidate's (same fingerprint, then compared
/// byte for byte, so nothing a provider declares is trusted) is not hashed
/// again: it gets that candidate's digest, which is the digest it would
/// have computed.
fn hash_contents(candidates: &mut [Candidate<'_>], fingerprints: &[u64], workers: Workers) {
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
    drop(first);
    let shared: &[Candidate<'_>] = candidates;
    let hashed = workers.map_chunks(
        shared,
        |c| c.body.len(),
        |start, chunk| {
            let mut out: Vec<Hashed> = Vec::with_capacity(chunk.len());
            for (n, c) in chunk.iter().enumerate() {
                if let Some(next) = chunk.get(n + TOUCH_AHEAD) {
                    touch(next.body.as_bytes());
                    // A repeat is compared with its first occurrence, cold by now.
                    if let Some(first) = shared.get(same_as[start + n + TOUCH_AHEAD]) {
                        touch(first.body.as_bytes());
                    }
                }
                out.push(match c.body {
                    Cow::Owned(_) => Hashed::Already,
                    Cow::Borrowed(text) => {
                        let j = same_as[start + n];
                        if j != usize::MAX && shared[j].body.as_bytes() == text.as_bytes() {
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
    for (i, h) in hashed.into_iter().flatten().enumerate() {
        match h {
            Hashed::Already => {}
            Hashed::Digest(sha) => candidates[i].sha = sha,
            // `j` is the first candidate of its fingerprint, so it was hashed
            // itself, and it comes earlier.
            Hashed::SameAs(j) => candidates[i].sha = candidates[j].sha,
        }
    }
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

/// How many frames' metadata [`touch_metadata`] reads at once, one batch ahead.
const TOUCH_BATCH: usize = 8;

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

/// Read the first byte of each string of `frame` that building its
/// candidate reads (id, label, declared digest, `file` provenance). They
/// are separate heap blocks, cold in a large composition: reading them a
/// few frames ahead lets their cache misses overlap instead of being taken
/// one after the other while the frame is built.
fn touch_metadata(frame: &ContextFrame) {
    let first = first_byte;
    let mut sum = first(&frame.id)
        .wrapping_add(frame.citation_label.as_deref().map_or(0, first))
        .wrapping_add(frame.content_digest.as_deref().map_or(0, first));
    for p in &frame.provenance {
        sum = sum
            .wrapping_add(first(&p.kind))
            .wrapping_add(p.uri.as_deref().map_or(0, first))
            .wrapping_add(p.range.as_deref().map_or(0, first));
    }
    std::hint::black_box(sum);
}

/// The first byte of `s` (0 if empty): reading it brings its cache line in.
fn first_byte(s: &str) -> u8 {
    s.as_bytes().first().copied().unwrap_or(0)
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
    entries: &[FrameAudit],
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
        frame: entries[candidates[*rep].entry].frame.clone(),
        provenance: provenance.into_iter().cloned().collect(),
        merged: members
            .iter()
            .filter(|&&m| m != *rep)
            .map(|&m| entries[candidates[m].entry].frame.clone())
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
