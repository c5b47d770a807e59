//! The per-frame checks: every offered frame gets its audit entry, and the
//! ones that pass become [`Candidate`]s (hashed, D1-checked, with their
//! `file` regions) for dedup and packing.

use contextgraph_types::{
    token_cost_for, token_cost_of_len, ContextFrame, FrameKind, Representation,
};
use std::borrow::Cow;

use crate::audit::{Exclusion, FrameAudit, FrameStatus};
use crate::dedup::{regions_of, Candidate, Declared, Region};
use crate::hash::ContentSha256;
use crate::keys::Keyer;
use crate::labels::raw_label;
use crate::outcome::{ProviderOutcome, ProviderStatus};
use crate::parallel::Workers;

use super::hashing::{fingerprint, first_byte, hash_contents, touch_metadata, TOUCH_BATCH};
use super::Rehydrate;

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
pub(super) fn candidates<'a>(
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
    let score = crate::ranking::composer_score(frame.score);
    let label = raw_label(
        frame.citation_label.as_deref(),
        &frame.title,
        &frame.id,
        job.provider_id,
    );
    // The unescaped size of the frame's identity other than the label: with
    // the label's and the content's, a bound on the text the prompt's
    // boundary token must be chosen against.
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
/// The audit entry of a frame excluded before it was hashed.
fn excluded_early(frame: &ContextFrame, provider_id: &str, reason: Exclusion) -> FrameAudit {
    FrameAudit {
        frame: frame.frame_id(provider_id),
        content_sha256: None,
        token_cost: token_cost_for(frame.content.as_deref()),
        status: FrameStatus::Excluded(reason),
    }
}

pub(super) fn distinct_anchors<'a>(anchors: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = anchors.map(str::to_owned).collect();
    out.sort();
    out.dedup();
    out
}
