// Packing candidates into an honest answer: the kinds filter (Q1), the
// `as_of` pin, a deterministic ranking, and greedy budget packing (B1, B4)
// with a truthful `truncated` / `dropped_estimate`. Each step is public.

import { U32_MAX, parseTimestamp } from "./wire.js";

/** Q1: only frames of a kind the query accepts (all when it names none). */
export function filterKinds(candidates, query) {
  const list = [...candidates];
  return query.kinds.length ? list.filter((f) => query.kinds.includes(f.kind)) : list;
}

/**
 * `as_of`: drop every frame whose `recorded_at` or `valid_from` is after the
 * pinned instant (compared as instants). When pinned, a frame whose date
 * does not parse is dropped too: nothing shows it is not from the future.
 */
export function filterAsOf(candidates, query) {
  const pin = query.asOfInstant ?? (query.asOf !== undefined ? parseTimestamp(query.asOf) : null);
  const list = [...candidates];
  if (pin === null || pin === undefined) return list;
  const notAfter = (v) => {
    if (v === undefined || v === null) return true;
    const t = parseTimestamp(v);
    return t !== null && t <= pin;
  };
  return list.filter((f) => notAfter(f.recorded_at) && notAfter(f.valid_from));
}

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Score descending (NaN last), then id, then digest (absent first); in place. */
export function rank(frames) {
  const score = (f) => (typeof f.score === "number" && !Number.isNaN(f.score) ? f.score : -Infinity);
  return frames.sort(
    (a, b) =>
      score(b) - score(a) ||
      cmp(String(a.id), String(b.id)) ||
      cmp(a.content_digest === undefined ? 0 : 1, b.content_digest === undefined ? 0 : 1) ||
      cmp(a.content_digest ?? "", b.content_digest ?? ""),
  );
}

/**
 * The answer to `query` from `candidates`: filter kinds and `as_of` (not
 * counted as dropped), rank (unless `ranked`), take each frame whose cost
 * fits what is left of `max_tokens` until `max_frames` are taken;
 * `truncated` is true exactly when an eligible candidate was left out.
 */
export function pack(candidates, query, options = {}) {
  const eligible = filterAsOf(filterKinds(candidates, query), query);
  if (!options.ranked) rank(eligible);
  let remaining = query.maxTokens;
  const frames = [];
  let dropped = 0;
  for (const f of eligible) {
    const cost = f.token_cost;
    if (frames.length < query.maxFrames && Number.isInteger(cost) && cost <= remaining) {
      remaining -= cost;
      frames.push(f);
    } else {
      dropped++;
    }
  }
  const result = { frames, truncated: dropped > 0 };
  if (dropped > 0) result.dropped_estimate = Math.min(dropped, U32_MAX);
  return result;
}
