// The honesty checks the runner applies before anything leaves the
// provider, callable from a provider's own tests. A host drops every frame
// of an answer breaking B1/B3/B4, D1, F1-F5 (B2); catching it here turns a
// silent quarantine into a named `internal` error on the first run.

import { KINDS, U32_MAX, contentDigest, isSha256Digest, parseRange, parseTimestamp, tokenCost } from "./wire.js";

function blank(v) {
  return typeof v !== "string" || v.trim() === "";
}

/** Every rule a frame can be checked on alone; paths under `path`. */
export function auditFrame(f, path = "") {
  const out = [];
  const bad = (anchor, field, message) => out.push({ anchor, path: path ? (field ? `${path}.${field}` : path) : field, message });
  if (f === null || typeof f !== "object" || Array.isArray(f)) {
    bad("shape", "", "a frame must be a JSON object");
    return out;
  }
  if (typeof f.id !== "string" || f.id === "") bad("shape", "id", "frame id must be a non-empty string");
  if (!KINDS.includes(f.kind)) bad("U2", "kind", `kind ${JSON.stringify(f.kind)} is not one of ${KINDS.join(", ")}`);
  if (typeof f.score !== "number" || !(f.score >= 0 && f.score <= 1)) bad("F1", "score", `score ${f.score} is not a number in [0, 1]`);
  if (blank(f.title)) bad("F2", "title", "title is empty; every frame needs a human label");
  if (blank(f.citation_label)) bad("F3", "citation_label", "citation_label is missing or empty; hosts cite frames by label");
  let content = f.content;
  if (content !== undefined && content !== null && typeof content !== "string") {
    bad("shape", "content", "content must be a string");
    content = undefined;
  }
  const rep = f.representation ?? "full";
  if (rep !== "full") {
    bad("P5", "representation", `this SDK builds full frames only; ${JSON.stringify(rep)} needs resolve, which 1.0 has no operation for`);
  } else {
    if (content === undefined || content === null) bad("P1", "content", "a full frame must carry content");
    for (const m of ["content_ref", "transform", "canonical_content_hash"]) {
      if (f[m] !== undefined && f[m] !== null) bad("P1", m, `a full frame must not carry ${m}`);
    }
  }
  const expected = tokenCost(content);
  if (f.token_cost !== expected) {
    const n = typeof content === "string" ? Buffer.byteLength(content, "utf8") : 0;
    bad("B3", "token_cost", `token_cost ${f.token_cost} does not match the content: ${n} bytes cost ceil(${n}/4) = ${expected}`);
  }
  const digest = f.content_digest;
  if (digest !== undefined && digest !== null) {
    if (!isSha256Digest(digest)) bad("D1", "content_digest", `content_digest ${JSON.stringify(digest)} is not sha256: followed by 64 lowercase hex digits`);
    else if (typeof content === "string" && contentDigest(content) !== digest) {
      bad("D1", "content_digest", `content_digest ${digest} is not the digest of the content (${contentDigest(content)})`);
    }
  }
  const stamps = {};
  for (const m of ["valid_from", "valid_to", "recorded_at"]) {
    if (f[m] !== undefined && f[m] !== null) {
      stamps[m] = parseTimestamp(f[m]);
      if (stamps[m] === null) bad("F4", m, `${m} ${JSON.stringify(f[m])} is not a protocol timestamp (YYYY-MM-DDTHH:MM:SS[.f]Z)`);
    }
  }
  if (stamps.valid_from != null && stamps.valid_to != null && stamps.valid_from > stamps.valid_to) bad("F4", "valid_to", "valid_to is earlier than valid_from");
  const provenance = f.provenance ?? [];
  if (!Array.isArray(provenance)) bad("shape", "provenance", "provenance must be an array");
  else {
    provenance.forEach((p, i) => {
      const at = `provenance[${i}]`;
      if (p === null || typeof p !== "object" || blank(p.type)) return bad("shape", `${at}.type`, "provenance entry must be an object with a type");
      if (p.digest !== undefined && p.digest !== null && !isSha256Digest(p.digest)) bad("F5", `${at}.digest`, `digest ${JSON.stringify(p.digest)} is not sha256: followed by 64 lowercase hex digits`);
      if (p.type !== "file") return;
      if (blank(p.uri)) bad("F5", `${at}.uri`, "file provenance must name the file it read (uri)");
      if (p.digest === undefined || p.digest === null) bad("F5", `${at}.digest`, "file provenance must carry the sha256 digest of the bytes it addresses");
      if (p.range !== undefined && p.range !== null && parseRange(p.range) === null) bad("F5", `${at}.range`, `range ${JSON.stringify(p.range)} is not L<start>-<end> with 1 <= start <= end`);
    });
  }
  const relations = f.relations ?? [];
  if (!Array.isArray(relations)) bad("shape", "relations", "relations must be an array");
  else {
    relations.forEach((r, i) => {
      const at = `relations[${i}]`;
      if (r === null || typeof r !== "object" || typeof r.rel !== "string" || r.rel === "") return bad("shape", `${at}.rel`, "relation name is empty");
      if (blank(r.target_uri)) bad("G2", `${at}.target_uri`, "relation target_uri is empty");
      if (blank(r.display_name)) bad("G1", `${at}.display_name`, "relation has no display_name; edges are shown by human label");
    });
  }
  return out;
}

/**
 * Every reason `result` may not be sent as the answer to `query`: each
 * frame's rules plus B1, B4, Q1, `as_of`, `truncated` and duplicate ids (D2).
 */
export function auditAnswer(query, result) {
  if (result === null || typeof result !== "object" || !Array.isArray(result.frames)) {
    return [{ anchor: "shape", path: "frames", message: "an answer must be an object with a frames array (use pack())" }];
  }
  const out = [];
  const frames = result.frames;
  if (typeof result.truncated !== "boolean") out.push({ anchor: "shape", path: "truncated", message: "truncated is required and must be a boolean" });
  const dropped = result.dropped_estimate;
  if (dropped !== undefined && dropped !== null && !(Number.isInteger(dropped) && dropped >= 0 && dropped <= U32_MAX)) {
    out.push({ anchor: "shape", path: "dropped_estimate", message: "dropped_estimate must be an integer from 0 to 4294967295" });
  } else if (dropped > 0 && result.truncated === false) {
    out.push({ anchor: "truncated", path: "dropped_estimate", message: "dropped_estimate is positive but truncated is false" });
  }
  const total = frames.reduce((s, f) => s + (f && Number.isInteger(f.token_cost) ? f.token_cost : 0), 0);
  if (total > query.maxTokens) out.push({ anchor: "B1", path: "frames", message: `frames cost ${total} tokens in total, over the budget of ${query.maxTokens}` });
  if (frames.length > query.maxFrames) out.push({ anchor: "B4", path: "frames", message: `${frames.length} frames returned, over max_frames ${query.maxFrames}` });
  const seen = new Map();
  const pin = query.asOfInstant ?? null;
  frames.forEach((f, i) => {
    const at = `frames[${i}]`;
    out.push(...auditFrame(f, at));
    if (f === null || typeof f !== "object") return;
    if (typeof f.id === "string" && f.id) {
      if (seen.has(f.id)) out.push({ anchor: "D2", path: `${at}.id`, message: `frame id ${JSON.stringify(f.id)} appears more than once (also frames[${seen.get(f.id)}])` });
      else seen.set(f.id, i);
    }
    if (query.kinds.length && !query.kinds.includes(f.kind)) out.push({ anchor: "Q1", path: `${at}.kind`, message: `kind ${JSON.stringify(f.kind)} was not requested (kinds filter: ${query.kinds.join(", ")})` });
    if (pin !== null) {
      for (const m of ["recorded_at", "valid_from"]) {
        const t = parseTimestamp(f[m]);
        if (t !== null && t > pin) out.push({ anchor: "as_of", path: `${at}.${m}`, message: `${m} ${f[m]} is after the query's as_of ${query.asOf}` });
      }
    }
  });
  return out;
}

const STATUSES = ["valid", "stale", "gone", "unknown"];

function identityKey(i) {
  return JSON.stringify([i.provider_id, i.frame_id, i.content_digest ?? null]);
}

/**
 * V2: exactly one verdict per distinct requested identity, in request order;
 * unanswered identities get `unknown`, unasked or malformed verdicts (V4: a
 * replacement that is not a digest) are dropped.
 */
export function completeVerdicts(requested, verdicts) {
  const answered = new Map();
  for (const v of Array.isArray(verdicts) ? verdicts : []) {
    if (!v || typeof v !== "object" || !v.frame || typeof v.frame !== "object" || !STATUSES.includes(v.status)) continue;
    if (v.status === "stale" && v.replacement_digest !== undefined && v.replacement_digest !== null && !isSha256Digest(v.replacement_digest)) continue;
    const k = identityKey(v.frame);
    if (!answered.has(k)) answered.set(k, v);
  }
  const out = [];
  const done = new Set();
  for (const identity of requested) {
    const k = identityKey(identity);
    if (done.has(k)) continue;
    done.add(k);
    const given = answered.get(k);
    const verdict = { frame: { ...identity }, status: given ? given.status : "unknown" };
    if (given && given.status === "stale" && given.replacement_digest) verdict.replacement_digest = given.replacement_digest;
    out.push(verdict);
  }
  return out;
}

/**
 * The honest verdict for one identity given the digest served now for its
 * frame id (`current`, null when unknown) and whether the frame is still
 * served: gone / valid (same digest) / stale with replacement / unknown.
 * `provider_id` is the host's label, echoed unchanged and not compared.
 */
export function verdictByDigest(identity, current, served = true) {
  const verdict = { frame: { ...identity } };
  const held = identity.content_digest;
  if (!served) verdict.status = "gone";
  else if (current === null || current === undefined || held === undefined || held === null) verdict.status = "unknown";
  else if (held === current) verdict.status = "valid";
  else {
    verdict.status = "stale";
    verdict.replacement_digest = current;
  }
  return verdict;
}
