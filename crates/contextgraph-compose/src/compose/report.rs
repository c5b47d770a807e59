//! The record of a composition: every frame's final status, the citations of
//! the rendered blocks, and each provider's audit line and usage.

use contextgraph_types::{Provenance, ProviderUsage, ServedFrame};

use crate::audit::{
    DuplicateBasis, Exclusion, FrameAudit, FrameStatus, Inclusion, OutcomeAudit, ProviderAudit,
};
use crate::dedup::Candidate;
use crate::outcome::{ProviderOutcome, ProviderStatus, ViolationRecord};

use super::blocks::Blocks;
use super::candidates::distinct_anchors;
use super::pack::{Packing, Split};
use super::Citation;

/// The frames each provider had rendered (UR1: served = the rendered
/// frames, billed at recomputed cost), per provider in provider-id order.
pub(super) fn served_frames(
    blocks: &Blocks<'_, '_>,
    entries: &[FrameAudit],
    included: &[bool],
    n_providers: usize,
) -> Vec<Vec<ServedFrame>> {
    let mut served: Vec<Vec<ServedFrame>> = vec![Vec::new(); n_providers];
    for g in (0..blocks.len()).filter(|&g| included[g]) {
        let c = blocks.rep(g);
        served[c.provider].push(ServedFrame {
            frame: entries[c.entry].frame.clone(),
            token_cost: c.cost,
        });
    }
    served
}

/// Every frame's final audit entry, canonical order: each candidate's
/// (included, duplicate of its group's representative, or over budget),
/// merged with the `early` ones (quarantined providers, ids served twice).
pub(super) fn frame_entries(
    mut entries: Vec<FrameAudit>,
    mut early: Vec<FrameAudit>,
    blocks: &Blocks<'_, '_>,
    packing: &Packing,
    placed: &[usize],
) -> Vec<FrameAudit> {
    let (candidates, groups) = (blocks.candidates, blocks.groups);
    let mut position = vec![u32::MAX; blocks.len()];
    for (at, &g) in placed.iter().enumerate() {
        position[g] = u32::try_from(at).unwrap_or(u32::MAX);
    }
    let mut group_of = vec![0usize; candidates.len()];
    for (g, (range, _)) in groups.groups.iter().enumerate() {
        for &m in &groups.members[range.clone()] {
            group_of[m] = g;
        }
    }
    let charge =
        |g: usize| packing.charge[g].unwrap_or(blocks.lower_bound[g]) + packing.declaration[g];
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
        } else if packing.included[g] {
            FrameStatus::Included(Inclusion {
                label: blocks.labels[g].to_string(),
                position: position[g],
                charge: charge(g),
            })
        } else {
            FrameStatus::Excluded(Exclusion::OverBudget {
                charge: charge(g),
                remaining: packing.room,
            })
        };
        entries[c.entry].status = status;
    }
    if early.is_empty() {
        return entries;
    }
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
    merged
}

/// Each provider's audit line and usage, in provider-id order.
pub(super) fn provider_reports(
    providers: &[&ProviderOutcome],
    served: Vec<Vec<ServedFrame>>,
    split: &Split,
    used_by: &[u32],
) -> (Vec<ProviderAudit>, Vec<ProviderUsage>) {
    let mut provider_audits = Vec::with_capacity(providers.len());
    let mut usage = Vec::with_capacity(providers.len());
    for (p, (outcome, served)) in providers.iter().zip(served).enumerate() {
        let offered = u32::try_from(outcome.offered_frames().len()).unwrap_or(u32::MAX);
        let included_here = u32::try_from(served.len()).unwrap_or(u32::MAX);
        provider_audits.push(ProviderAudit {
            provider_id: outcome.provider_id.clone(),
            outcome: outcome_audit(&outcome.status),
            weight: split.weights[p],
            demand: split.demand[p],
            share: split.shares[p],
            used: used_by[p],
            frames_offered: offered,
            frames_included: included_here,
            repairs: outcome.repairs.clone(),
        });
        usage.push(ProviderUsage {
            provider_id: outcome.provider_id.clone(),
            frames_rejected: offered.saturating_sub(included_here),
            served_frames: served,
            ..ProviderUsage::default()
        });
    }
    (provider_audits, usage)
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
pub(super) fn citation(
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
