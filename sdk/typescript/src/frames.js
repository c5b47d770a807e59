// Frames whose cost and digest cannot lie: `frame()` computes `token_cost`
// (B3) and `content_digest` (D1) from the content it puts in the frame, so
// a host auditing the answer never finds them wrong and drops it (B2).

import { contentDigest, tokenCost } from "./wire.js";

/** F1: `score` clamped into [0, 1]; NaN (or not a number) is 0. */
export function clampScore(score) {
  const v = Number(score);
  if (Number.isNaN(v)) return 0;
  return Math.min(1, Math.max(0, v));
}

/**
 * A `full` frame carrying `content` inline, `token_cost` and
 * `content_digest` computed, `score` clamped, `citation_label` defaulting
 * to the title (F3), empty optional members omitted.
 */
export function frame(id, kind, title, content, options = {}) {
  if (typeof content !== "string") throw new TypeError("frame content must be a string (the exact text sent inline)");
  const out = {
    id,
    kind,
    title,
    score: clampScore(options.score ?? 0.5),
    token_cost: tokenCost(content),
    content,
    content_digest: contentDigest(content),
  };
  const label = options.citationLabel && options.citationLabel.trim() ? options.citationLabel : title;
  if (label && label.trim()) out.citation_label = label;
  if (options.uri) out.uri = options.uri;
  if (options.recordedAt !== undefined) out.recorded_at = options.recordedAt;
  if (options.validFrom !== undefined) out.valid_from = options.validFrom;
  if (options.validTo !== undefined && options.validTo !== null) out.valid_to = options.validTo;
  if (options.contentFidelity !== undefined) out.content_fidelity = options.contentFidelity;
  if (options.provenance && options.provenance.length) out.provenance = options.provenance.map((p) => ({ ...p }));
  if (options.relations && options.relations.length) out.relations = options.relations.map((r) => ({ ...r }));
  return out;
}

/** A graph edge (G1: non-empty display_name, G2: non-empty target_uri). */
export function relation(rel, targetUri, displayName) {
  return { rel, target_uri: targetUri, display_name: displayName };
}
