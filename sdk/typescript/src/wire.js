// Wire vocabulary and the value rules every party can recompute: the token
// cost of content (B3), the digest of bytes (D1, F5), the timestamp form
// (F4) and the protocol version families (H1, H3).

import { createHash } from "node:crypto";

/** The protocol version this SDK speaks. */
export const PROTOCOL_VERSION = "contextgraph/1.0-draft";

/** The frame kinds of the contextgraph/1 family (closed within the family). */
export const KINDS = Object.freeze(["snippet", "symbol", "fact", "doc", "memory", "episode", "graph"]);

export const U32_MAX = 0xffffffff;

const VERSION = /^contextgraph\/([0-9]+)\.([0-9]+)(-draft)?$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const TIMESTAMP = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?Z$/;
const RANGE = /^L([0-9]+)-([0-9]+)$/;

/**
 * B3: ceil(utf8_bytes(content) / 4), 0 for no content. Bytes of the UTF-8
 * encoding, not UTF-16 code units: the Rust types crate's rule.
 */
export function tokenCost(content) {
  if (content === undefined || content === null) return 0;
  return Math.min(Math.ceil(Buffer.byteLength(content, "utf8") / 4), U32_MAX);
}

/** `sha256:` + 64 lowercase hex digits of exactly `data`. */
export function sha256Digest(data) {
  return "sha256:" + createHash("sha256").update(data).digest("hex");
}

// Digests of recent contents. The honesty guard recomputes every frame's
// digest before it is sent, and a provider serves the same contents again
// and again; a fresh node:crypto hash costs several microseconds, a lookup
// a fraction of one. Keyed by the content itself, so a hit is the digest
// of exactly these bytes. Bounded: cleared when full; long contents are
// not kept.
const DIGEST_CACHE_ENTRIES = 4096;
const DIGEST_CACHE_MAX_CHARS = 16384;
const digestCache = new Map();

/** D1: the digest of inline content, over its exact UTF-8 bytes. */
export function contentDigest(content) {
  const cached = digestCache.get(content);
  if (cached !== undefined) return cached;
  const digest = sha256Digest(Buffer.from(content, "utf8"));
  if (content.length <= DIGEST_CACHE_MAX_CHARS) {
    if (digestCache.size >= DIGEST_CACHE_ENTRIES) digestCache.clear();
    digestCache.set(content, digest);
  }
  return digest;
}

export function isSha256Digest(text) {
  return typeof text === "string" && DIGEST.test(text);
}

/** The major family (`contextgraph/1`), or null outside the grammar. */
export function protocolFamily(version) {
  if (typeof version !== "string") return null;
  const m = VERSION.exec(version);
  return m ? "contextgraph/" + String(BigInt(m[1])) : null;
}

/** H1/H3: versions interoperate exactly when their families are equal. */
export function versionsCompatible(a, b) {
  const fa = protocolFamily(a);
  return fa !== null && fa === protocolFamily(b);
}

function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor((y >= 0 ? y : y - 399) / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function leap(y) {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/**
 * F4: the instant as a bigint of nanoseconds since the epoch, or null when
 * `text` is not exactly YYYY-MM-DDTHH:MM:SS(.f+)?Z naming a real instant.
 * Compare instants, never strings (`…:00Z` sorts after `…:00.5Z` as text).
 */
export function parseTimestamp(text) {
  if (typeof text !== "string") return null;
  const m = TIMESTAMP.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const dim = [31, leap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (month < 1 || month > 12 || day < 1 || day > dim || hour > 23 || minute > 59 || second > 59) return null;
  const nanos = m[7] ? BigInt((m[7].slice(1) + "000000000").slice(0, 9)) : 0n;
  const secs = BigInt(daysFromCivil(year, month, day)) * 86400n + BigInt(hour * 3600 + minute * 60 + second);
  return secs * 1000000000n + nanos;
}

/** The F4 wire form of a Date (or milliseconds since the epoch). */
export function formatTimestamp(date) {
  const d = date instanceof Date ? date : new Date(date);
  const iso = d.toISOString(); // 2026-01-02T03:04:05.678Z
  return iso.endsWith(".000Z") ? iso.slice(0, -5) + "Z" : iso;
}

/** F5: `L<start>-<end>` as [start, end], or null (1 <= start <= end). */
export function parseRange(text) {
  if (typeof text !== "string") return null;
  const m = RANGE.exec(text);
  if (!m) return null;
  const start = Number(m[1]);
  const end = Number(m[2]);
  return start >= 1 && start <= end ? [start, end] : null;
}

/** E1: the dimension count of `<model-id>/<dimensions>[/<normalization>]`. */
export function fingerprintDimensions(fp) {
  if (typeof fp !== "string") return null;
  const parts = fp.split("/");
  if (parts.length < 2 || parts.length > 3 || parts[0] === "" || parts[2] === "") return null;
  if (!/^[0-9]+$/.test(parts[1])) return null;
  return Number(parts[1]);
}
