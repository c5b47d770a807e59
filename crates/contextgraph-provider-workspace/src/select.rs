//! Which candidates become frames: [`WorkspaceProvider::select`] builds
//! only the frames packing can take, walking the ranking in runs of equal
//! score, with the frames it is expected to build made ahead of it on a
//! second thread (`lookahead.rs`).

use contextgraph_provider_sdk::{clamp_score, pack, rank};
use contextgraph_search::{FileCache, Ranked, SearchView};
use contextgraph_types::{token_cost_of_len, ContextFrame, ContextQuery};

use super::{WorkspaceProvider, MAX_MATERIALIZED};

impl WorkspaceProvider {
    /// The frames of `ranked` that packing takes, in packing order, and how
    /// many candidates were left out (not fresh, over the budget, past the
    /// `want`-th fresh one, or not taken by packing).
    ///
    /// The answer is exactly that of materialising the first `want` fresh
    /// candidates that fit `budget` alone and packing them all ([`pack`]:
    /// score descending, then id; greedy under `max_tokens` and
    /// `max_frames`), but only frames packing can still take are built: a
    /// frame costs a file read, two digests and its relations, and most of
    /// the up to 400 candidates were built only to be dropped by packing.
    /// Candidates are walked in runs of equal score (the order packing
    /// sees them in, when `ranked`'s scores are as [`clamp_score`] leaves
    /// them); a candidate costing more than the budget left when its run
    /// starts cannot be taken, so only whether it is fresh matters (it
    /// counts towards `want`), and that is checked only when the `want`-th
    /// place is reached while some later candidate could still be taken.
    pub(super) fn select(
        &self,
        view: &SearchView<'_>,
        ranked: &[Ranked],
        query: &ContextQuery,
        compact: bool,
        files: &mut FileCache,
    ) -> (Vec<ContextFrame>, u64) {
        self.select_with(view, ranked, query, compact, files, true)
    }

    /// [`select`](Self::select), with the lookahead thread or (`false`:
    /// what tests compare it with) every frame built by the walk.
    pub(super) fn select_with(
        &self,
        view: &SearchView<'_>,
        ranked: &[Ranked],
        query: &ContextQuery,
        compact: bool,
        files: &mut FileCache,
        lookahead: bool,
    ) -> (Vec<ContextFrame>, u64) {
        let index = view.index();
        let budget = u64::from(query.max_tokens);
        let max_frames = usize::try_from(query.max_frames).unwrap_or(usize::MAX);
        let want = (query.max_frames as usize)
            .saturating_mul(4)
            .clamp(32, MAX_MATERIALIZED);
        // What a candidate's frame costs: its region's length, which is the
        // indexed length whenever the frame can be built (same digest).
        let cost = |slot: u32| {
            index.chunk(slot).map_or(u64::MAX, |(_, c)| {
                let len = match (&c.outline, compact) {
                    (Some(o), true) => o.len(),
                    _ => c.byte_len as usize,
                };
                u64::from(token_cost_of_len(len))
            })
        };
        let costs: Vec<u64> = ranked.iter().map(|r| cost(r.slot)).collect();
        let in_order = ranked
            .windows(2)
            .all(|w| clamp_score(w[0].score) >= clamp_score(w[1].score));
        if !in_order {
            return self.select_all(view, ranked, &costs, query, compact, want, files);
        }
        // The cheapest candidate from each position on (within the budget).
        let mut cheapest_from = vec![u64::MAX; ranked.len() + 1];
        for i in (0..ranked.len()).rev() {
            let c = if costs[i] <= budget {
                costs[i]
            } else {
                u64::MAX
            };
            cheapest_from[i] = cheapest_from[i + 1].min(c);
        }
        // The frames the walk below is expected to build (those that fit
        // what is left of the budget, in rank order, up to the frame
        // limit) are built ahead of it on a second thread: see
        // `lookahead.rs`. Only who builds a frame changes.
        let plan = if lookahead {
            lookahead_plan(&costs, budget, max_frames.min(want))
        } else {
            Vec::new()
        };
        let ahead = |k: usize, files: &mut FileCache| {
            // The lookahead's cache has a stale flag of its own, read per
            // build: a stale candidate the walk never reaches must not
            // mark the answer stale, so the walk raises its own flag only
            // for the builds it takes.
            let stale = files.stale_flag();
            let frame = self.materialize(view, ranked[k].slot, ranked[k].score, compact, files);
            (
                frame,
                stale.swap(false, std::sync::atomic::Ordering::Relaxed),
            )
        };
        crate::lookahead::with_lookahead(&plan, FileCache::default, &ahead, |lookahead| {
            self.walk_runs(
                view,
                ranked,
                &costs,
                &cheapest_from,
                query,
                compact,
                want,
                files,
                lookahead,
            )
        })
    }

    /// [`select`](Self::select)'s walk over runs of equal score, taking
    /// candidate `k`'s frame from `lookahead` (built there, or here).
    #[allow(clippy::too_many_arguments)]
    fn walk_runs(
        &self,
        view: &SearchView<'_>,
        ranked: &[Ranked],
        costs: &[u64],
        cheapest_from: &[u64],
        query: &ContextQuery,
        compact: bool,
        want: usize,
        files: &mut FileCache,
        lookahead: &crate::lookahead::Walk<'_, (Option<ContextFrame>, bool)>,
    ) -> (Vec<ContextFrame>, u64) {
        let budget = u64::from(query.max_tokens);
        let max_frames = usize::try_from(query.max_frames).unwrap_or(usize::MAX);
        let mut taken: Vec<ContextFrame> = Vec::new();
        let mut remaining = budget;
        // Fresh candidates within `want` so far, and candidates counted
        // towards `want` before their freshness was checked.
        let mut fresh = 0usize;
        let mut unchecked: Vec<u32> = Vec::new();
        let mut capped = false;
        let mut i = 0;
        while i < ranked.len() && !capped && taken.len() < max_frames {
            let score = clamp_score(ranked[i].score);
            let end = ranked[i..]
                .iter()
                .position(|r| clamp_score(r.score) != score)
                .map_or(ranked.len(), |n| i + n);
            let room = remaining;
            let mut run: Vec<ContextFrame> = Vec::new();
            for k in i..end {
                if fresh + unchecked.len() >= want {
                    if unchecked.is_empty() || cheapest_from[k] > room {
                        // The `want`-th place is reached, or nothing from
                        // here on could be taken wherever it lies.
                        capped = true;
                        break;
                    }
                    fresh += unchecked
                        .drain(..)
                        .filter(|&s| self.fresh_excerpt(view, s, files).is_some())
                        .count();
                    if fresh >= want {
                        capped = true;
                        break;
                    }
                }
                if costs[k] > budget {
                    continue;
                }
                if taken.len() < max_frames && costs[k] <= room {
                    let (frame, stale) = lookahead.build(k, || {
                        let frame =
                            self.materialize(view, ranked[k].slot, ranked[k].score, compact, files);
                        (frame, false)
                    });
                    if stale {
                        files
                            .stale_flag()
                            .store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    if let Some(f) = frame {
                        fresh += 1;
                        run.push(f);
                    }
                } else {
                    unchecked.push(ranked[k].slot);
                }
            }
            rank(&mut run);
            for f in run {
                let c = u64::from(f.token_cost);
                if taken.len() < max_frames && c <= remaining {
                    remaining -= c;
                    taken.push(f);
                }
            }
            i = end;
        }
        let left_out = (ranked.len() - taken.len()) as u64;
        (taken, left_out)
    }

    /// [`select`](Self::select) for a ranking not in packing order (a
    /// score packing reads differently): every candidate up to the
    /// `want`-th fresh one built, packed as a whole.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn select_all(
        &self,
        view: &SearchView<'_>,
        ranked: &[Ranked],
        costs: &[u64],
        query: &ContextQuery,
        compact: bool,
        want: usize,
        files: &mut FileCache,
    ) -> (Vec<ContextFrame>, u64) {
        let budget = u64::from(query.max_tokens);
        let mut frames = Vec::new();
        for (r, &cost) in ranked.iter().zip(costs) {
            if frames.len() >= want {
                break;
            }
            if cost > budget {
                continue;
            }
            if let Some(f) = self.materialize(view, r.slot, r.score, compact, files) {
                frames.push(f);
            }
        }
        let packed = pack(frames, query);
        let left_out = (ranked.len() - packed.frames.len()) as u64;
        (packed.frames, left_out)
    }
}

/// Which candidates [`WorkspaceProvider::select`]'s walk is expected to
/// build: in rank order, each that fits what is left of `budget` once the
/// ones before it are taken, up to `most`. A guess (a stale candidate, a run
/// of equal scores, packing's order within it can make the walk build
/// others): a candidate planned but not asked for costs the lookahead a
/// build, one asked for but not planned is built by the walk.
fn lookahead_plan(costs: &[u64], budget: u64, most: usize) -> Vec<usize> {
    let mut room = budget;
    let mut plan = Vec::new();
    for (k, &cost) in costs.iter().enumerate() {
        if plan.len() >= most {
            break;
        }
        if cost <= room {
            room -= cost;
            plan.push(k);
        }
    }
    plan
}
