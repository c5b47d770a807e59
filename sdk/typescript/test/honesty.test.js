// Every honesty helper, with a test that fails when it lies.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  ProvenanceError, auditAnswer, contentDigest, countLines, fileExcerpt, fileUriToPath, filterAsOf, formatTimestamp,
  frame, pack, parseQuery, parseTimestamp, pathToFileUri, readRange, sha256Digest, tokenCost, verdictByDigest,
} from "../src/index.js";
import { Fixed } from "./helpers.js";

const q = (extra = {}) => parseQuery({ goal: "g", max_frames: 10, max_tokens: 1000, ...extra });
const anchors = (query, result) => auditAnswer(query, result).map((v) => v.anchor);

test("B3: token cost counts UTF-8 bytes, rounded up", () => {
  assert.equal(tokenCost(undefined), 0);
  assert.equal(tokenCost(""), 0);
  assert.equal(tokenCost("abcd"), 1);
  assert.equal(tokenCost("abcde"), 2);
  assert.equal(tokenCost("ééé"), 2); // 6 bytes, 3 UTF-16 units
  assert.equal(tokenCost("€€€"), 3); // 9 bytes
  assert.equal(tokenCost("😀😀"), 2); // 8 bytes, 4 UTF-16 units
});

test("frame() cost and digest describe the content", () => {
  const f = frame("x", "doc", "T", "max_attempts bounds the tries");
  assert.equal(f.token_cost, 8);
  assert.equal(f.content_digest, "sha256:" + createHash("sha256").update("max_attempts bounds the tries").digest("hex"));
  assert.equal(f.citation_label, "T");
  assert.deepEqual(auditAnswer(q(), { frames: [f], truncated: false }), []);
  assert.equal(contentDigest("é"), "sha256:" + createHash("sha256").update(Buffer.from([0xc3, 0xa9])).digest("hex"));
  assert.equal(frame("x", "doc", "T", "c", { score: 3 }).score, 1);
  assert.equal(frame("x", "doc", "T", "c", { score: NaN }).score, 0);
});

test("the guard catches a lying cost and a lying digest", () => {
  const f = frame("x", "doc", "T", "12345678");
  assert.deepEqual(anchors(q(), { frames: [{ ...f, token_cost: 1 }], truncated: false }), ["B3"]);
  const edited = "body, edited after the digest was taken";
  assert.deepEqual(anchors(q(), { frames: [{ ...f, content: edited, token_cost: tokenCost(edited) }], truncated: false }), ["D1"]);
  assert.deepEqual(anchors(q(), { frames: [{ ...f, content_digest: "sha256:ABC" }], truncated: false }), ["D1"]);
});

test("F5: ranges address exact lines, terminators included", () => {
  const data = Buffer.from("one\r\ntwo\nthree");
  assert.equal(Buffer.from(readRange(data, 1, 1)).toString(), "one\r\n");
  assert.equal(Buffer.from(readRange(data, 2, 3)).toString(), "two\nthree");
  assert.equal(readRange(data, 3, 4), null);
  assert.equal(countLines(data), 3);
  assert.equal(countLines(Buffer.from("a\n")), 1);
  assert.equal(readRange(Buffer.from("a\n"), 2, 2), null);
});

test("F5: an excerpt's digest covers exactly its range, re-readable from the URI", () => {
  const dir = mkdtempSync(join(tmpdir(), "cgp-sdk-"));
  const path = join(dir, "my notes.md");
  const data = Buffer.from("one\r\ntwo\nthree");
  writeFileSync(path, data);
  const ex = fileExcerpt(path, data, 2, 3, "file-read", "t");
  assert.equal(ex.provenance.range, "L2-3");
  assert.equal(ex.provenance.digest, sha256Digest(Buffer.from("two\nthree")));
  assert.ok(ex.provenance.uri.startsWith("file:///") && ex.provenance.uri.includes("my%20notes.md"));
  assert.equal(fileUriToPath(ex.provenance.uri), resolve(path));
  assert.equal(sha256Digest(readRange(readFileSync(fileUriToPath(ex.provenance.uri)), 2, 3)), ex.provenance.digest);
  const f = ex.frame("id", "doc", "Title");
  assert.equal(f.content, "two\nthree");
  assert.equal(f.citation_label, "my notes.md L2-3");
  assert.throws(() => fileExcerpt(path, data, 2, 9), ProvenanceError);
  assert.throws(() => fileExcerpt(path, data, 0, 1), ProvenanceError);
  assert.throws(() => fileExcerpt(path, Buffer.from([0xff, 0xfe, 10]), 1, 1).frame("i", "doc", "T"), ProvenanceError);
  assert.equal(pathToFileUri("/a b/c#d.md"), "file:///a%20b/c%23d.md");
  assert.equal(fileUriToPath("file:///a%20b/c%23d.md"), "/a b/c#d.md");
  assert.throws(() => fileUriToPath("file://example.org/x"), ProvenanceError);
});

test("packing: truncation is truthful and the budget honoured", () => {
  const frames = new Fixed().frames; // costs 15, 1, 60
  let r = pack(frames, q({ max_tokens: 20 }));
  assert.deepEqual(r.frames.map((f) => f.id), ["a", "b"]);
  assert.equal(r.truncated, true);
  assert.equal(r.dropped_estimate, 1);
  r = pack(frames, q({ max_frames: 1 }));
  assert.equal(r.frames.length, 1);
  assert.equal(r.dropped_estimate, 2);
  r = pack(frames, q());
  assert.equal(r.truncated, false);
  assert.equal("dropped_estimate" in r, false);
  r = pack(frames, q({ max_tokens: 0 }));
  assert.deepEqual([r.frames, r.truncated, r.dropped_estimate], [[], true, 3]);
  assert.deepEqual(pack(frames, q({ kinds: ["fact"] })).frames.map((f) => f.kind), ["fact"]);
  assert.deepEqual(pack([...frames].reverse(), q()), pack(frames, q()));
});

test("the guard catches lying truncation, budgets, kinds, as_of and duplicate ids", () => {
  const frames = new Fixed().frames;
  assert.ok(anchors(q(), { frames: [], truncated: false, dropped_estimate: 2 }).includes("truncated"));
  assert.ok(anchors(q({ max_tokens: 10 }), { frames, truncated: false }).includes("B1"));
  assert.ok(anchors(q({ max_frames: 2 }), { frames, truncated: false }).includes("B4"));
  assert.ok(anchors(q({ kinds: ["fact"] }), { frames, truncated: false }).includes("Q1"));
  assert.ok(anchors(q({ as_of: "2026-01-15T00:00:00Z" }), { frames, truncated: false }).includes("as_of"));
  assert.ok(anchors(q(), { frames: [frames[0], frames[0]], truncated: false }).includes("D2"));
});

test("as_of compares instants, not strings", () => {
  const frames = new Fixed().frames;
  assert.deepEqual(filterAsOf(frames, q({ as_of: "2026-02-01T00:00:00Z" })).map((f) => f.id).sort(), ["a", "c"]);
  assert.deepEqual(filterAsOf(frames, q({ as_of: "2026-02-01T00:00:00.5Z" })).map((f) => f.id).sort(), ["a", "b", "c"]);
});

test("F4 timestamps: exact form, real dates", () => {
  assert.notEqual(parseTimestamp("2024-02-29T23:59:59Z"), null);
  for (const bad of ["2023-02-29T00:00:00Z", "2026-01-01t00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T24:00:00Z", "2026-01-01T00:00:00.Z"]) {
    assert.equal(parseTimestamp(bad), null, bad);
  }
  assert.equal(formatTimestamp(0), "1970-01-01T00:00:00Z");
  assert.equal(parseTimestamp(formatTimestamp(1700000000250)), 1700000000250000000n);
});

test("verdicts: valid only for the digest served now; provider_id echoed", () => {
  const ident = { provider_id: "any-label", frame_id: "f", content_digest: sha256Digest("x") };
  assert.equal(verdictByDigest(ident, sha256Digest("x")).status, "valid");
  const stale = verdictByDigest(ident, sha256Digest("y"));
  assert.deepEqual([stale.status, stale.replacement_digest], ["stale", sha256Digest("y")]);
  assert.equal(verdictByDigest(ident, null, false).status, "gone");
  assert.equal(verdictByDigest(ident, null).status, "unknown");
  assert.equal(verdictByDigest({ provider_id: "p", frame_id: "f" }, sha256Digest("x")).status, "unknown");
  assert.equal(stale.frame.provider_id, "any-label");
});
