// The protocol rules the runner enforces, one envelope at a time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError, Session, frame, pack, sha256Digest, verdictByDigest } from "../src/index.js";
import { Fixed, HANDSHAKE, queryLine } from "./helpers.js";

async function ready(provider) {
  const s = new Session(provider);
  assert.equal((await s.handleLine(HANDSHAKE)).type, "handshake_ack");
  return s;
}

test("the ack names the provider and its capabilities", async () => {
  const ack = await new Session(new Fixed()).handleLine(HANDSHAKE);
  assert.equal(ack.protocol_version, "contextgraph/1.0-draft");
  assert.equal(ack.provider.name, "fixed");
  assert.deepEqual(ack.capabilities, { query: { kinds: ["doc", "fact"] }, correlation: true, graph: false, verify: false });
});

test("H3: another family is named; the session stays usable; no query before the handshake", async () => {
  const s = new Session(new Fixed());
  assert.equal((await s.handleLine(queryLine("q1"))).code, "bad_request");
  assert.equal((await s.handleLine('{"type":"handshake","protocol_version":"contextgraph/2.0"}')).code, "incompatible_version");
  assert.equal((await s.handleLine('{"type":"handshake","protocol_version":"contextgraph/1.4"}')).type, "handshake_ack");
});

const MALFORMED = [
  "this is not json",
  '{"type":"query","id":"m2","query":{"goal":"trunc',
  '{"type":"query","id":"m3","query":{"goal":7,"max_frames":"many","max_tokens":-1}}',
  Buffer.concat([Buffer.from('{"type":"query","id":"m4","query":{"goal":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","max_frames":1,"max_tokens":10}}')]),
  '{"type":"no_such_envelope","id":"m5"}',
  '["type","query"]',
  '{"id":"m7","query":{"goal":"x","max_frames":1,"max_tokens":10}}',
  '{"type":"query","id":"m8","query":{"goal":"x","max_frames":true,"max_tokens":10}}',
  '{"type":"query","id":"m9","query":{"goal":"x","max_frames":4294967296,"max_tokens":10}}',
  '{"type":"query","id":"m10","query":{"goal":"x","max_frames":1,"max_tokens":10,"as_of":"2026-01-01"}}',
  '{"type":"query","id":"m12","query":{"goal":"x","max_frames":1,"max_tokens":1,"embedding":[1e999]}}',
  '{"type":"query","id":"m13","query":{"goal":"x","max_frames":1,"max_tokens":1,"embedding":[0.5]}}',
  '{"type":"verify","request":{"frames":[{"frame_id":1}]}}',
  '{"type":"frames","result":{"frames":[],"truncated":false}}',
  "[".repeat(100000),
];

test("R1: malformed lines get bad_request and the session survives", async () => {
  const s = await ready(new Fixed());
  for (const line of MALFORMED) {
    const reply = await s.handleLine(line);
    assert.deepEqual([reply.type, reply.code], ["error", "bad_request"], String(line).slice(0, 60));
  }
  assert.equal((await s.handleLine(queryLine("ok"))).type, "frames");
});

test("U1: unknown members and notifications are ignored", async () => {
  const s = await ready(new Fixed());
  assert.equal(await s.handleLine('{"type":"cgp_notice","note":"x"}'), null);
  assert.equal(await s.handleLine('{"type":"error","message":"host complains"}'), null);
  const plain = await s.handleLine(queryLine("a"));
  const extra = JSON.parse(queryLine("a"));
  extra["x-trace"] = "1";
  Object.assign(extra.query, { "x-future": { nested: [1] }, filters: ["language"], anchors: null });
  assert.deepEqual(await s.handleLine(JSON.stringify(extra)), plain);
});

test("provider exceptions are internal errors; ProviderError keeps its code", async () => {
  class Broken extends Fixed {
    query() {
      throw new RangeError("boom");
    }
  }
  const err = await (await ready(new Broken())).handleLine(queryLine("q"));
  assert.deepEqual([err.code, err.id], ["internal", "q"]);
  assert.match(err.message, /RangeError/);
  class Picky extends Fixed {
    async query() {
      throw ProviderError.unsupportedKind("only docs here");
    }
  }
  const e2 = await (await ready(new Picky())).handleLine(queryLine("q"));
  assert.deepEqual([e2.code, e2.message], ["unsupported_kind", "only docs here"]);
});

test("H4: ids are echoed only when correlation is declared", async () => {
  assert.equal((await (await ready(new Fixed())).handleLine(queryLine("q7"))).id, "q7");
  const lockStep = await ready(new Fixed(undefined, false));
  assert.equal("id" in (await lockStep.handleLine(queryLine("q7"))), false);
  assert.equal("id" in (await lockStep.handleLine('{"type":"nope","id":"q8"}')), false);
});

test("the guard withholds a dishonest answer as internal", async () => {
  class Liar extends Fixed {
    query() {
      const f = { ...frame("a", "doc", "A", "some content"), token_cost: 0 };
      return { frames: Array(10).fill(f), truncated: false };
    }
  }
  const err = await (await ready(new Liar())).handleLine(queryLine("q", { max_frames: 2 }));
  assert.equal(err.code, "internal");
  for (const a of ["B3", "B4", "D2"]) assert.match(err.message, new RegExp(a));
  class Odd extends Fixed {
    query(q) {
      return { ...pack(this.frames, q), extra: 1n };
    }
  }
  const s = await ready(new Odd());
  assert.equal(JSON.parse(s.encodeReply(await s.handleLine(queryLine("q")))).code, "internal");
});

class Verifying extends Fixed {
  verify(identities) {
    const current = new Map(this.frames.map((f) => [f.id, f.content_digest]));
    return identities.map((i) => verdictByDigest(i, current.get(i.frame_id), current.has(i.frame_id)));
  }
}

test("V2: verify is gated, one verdict per identity, judged by digest whatever the label", async () => {
  assert.equal((await (await ready(new Fixed())).handleLine('{"type":"verify","request":{"frames":[]}}')).code, "bad_request");
  const p = new Verifying();
  const s = await ready(p);
  assert.equal(s.capabilities.verify, true);
  const d = p.frames[0].content_digest;
  const asked = [
    { provider_id: "fixed", frame_id: "a", content_digest: d },
    { provider_id: "host-label", frame_id: "a", content_digest: d },
    { provider_id: "fixed", frame_id: "a", content_digest: sha256Digest("old") },
    { provider_id: "fixed", frame_id: "zz", content_digest: d },
    { provider_id: "fixed", frame_id: "a", content_digest: d },
  ];
  const reply = await s.handleLine(JSON.stringify({ type: "verify", request: { frames: asked } }));
  const v = reply.response.verdicts;
  assert.deepEqual(v.map((x) => x.status), ["valid", "valid", "stale", "gone"]);
  assert.equal(v[1].frame.provider_id, "host-label");
  assert.equal(v[2].replacement_digest, d);
  class Silent extends Fixed {
    verify() {
      return [{ frame: { provider_id: "x", frame_id: "not-asked" }, status: "valid" }];
    }
  }
  const r2 = await (await ready(new Silent())).handleLine('{"type":"verify","request":{"frames":[{"provider_id":"p","frame_id":"a"}]}}');
  assert.deepEqual(r2.response.verdicts.map((x) => x.status), ["unknown"]);
});
