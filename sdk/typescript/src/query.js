// The query a provider is asked, parsed and checked before it sees it.
// Unknown members are ignored (U1); `null` for an optional member is absent.

import { U32_MAX, parseTimestamp } from "./wire.js";

export class QueryError extends Error {
  constructor(message) {
    super(message);
    this.name = "QueryError";
  }
}

function u32(obj, key) {
  const v = obj[key];
  if (v === undefined || v === null) throw new QueryError(`query.${key} is missing; it is required (a u32)`);
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > U32_MAX) {
    throw new QueryError(`query.${key} must be an integer from 0 to 4294967295`);
  }
  return v;
}

function strings(obj, key) {
  const v = obj[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) throw new QueryError(`query.${key} must be an array of strings`);
  return v;
}

function optString(obj, key) {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new QueryError(`query.${key} must be a string`);
  return v;
}

/** The `query` member of a `query` envelope, checked; QueryError otherwise. */
export function parseQuery(obj) {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) throw new QueryError("query must be a JSON object");
  if (typeof obj.goal !== "string") throw new QueryError("query.goal must be a string");
  if (!obj.goal.trim()) throw new QueryError("query.goal is empty");
  const maxFrames = u32(obj, "max_frames");
  const maxTokens = u32(obj, "max_tokens");
  const asOf = optString(obj, "as_of");
  let asOfInstant = null;
  if (asOf !== undefined) {
    asOfInstant = parseTimestamp(asOf);
    if (asOfInstant === null) throw new QueryError(`F4: query.as_of ${JSON.stringify(asOf.slice(0, 64))} is not a protocol timestamp (YYYY-MM-DDTHH:MM:SS[.fraction]Z, UTC, a real date)`);
  }
  let embedding;
  if (obj.embedding !== undefined && obj.embedding !== null) {
    if (!Array.isArray(obj.embedding) || !obj.embedding.every((x) => typeof x === "number")) throw new QueryError("query.embedding must be an array of numbers");
    if (!obj.embedding.every(Number.isFinite)) throw new QueryError("E1: query.embedding values must be finite numbers");
    embedding = obj.embedding;
  }
  const queryText = optString(obj, "query_text");
  const kinds = strings(obj, "kinds");
  return {
    goal: obj.goal,
    queryText,
    embedding,
    kinds,
    anchors: strings(obj, "anchors"),
    maxFrames,
    maxTokens,
    asOf,
    asOfInstant,
    representationPreferences: strings(obj, "representation_preferences"),
    matchText: queryText !== undefined && queryText.trim() ? queryText : obj.goal,
    acceptsKind: (kind) => kinds.length === 0 || kinds.includes(kind),
  };
}
