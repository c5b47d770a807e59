// The stdio runner and the HTTP server, driven as a host would.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { request } from "node:http";
import { ExposureError, serve, serveHttp } from "../src/index.js";
import { Fixed, HANDSHAKE, queryLine } from "./helpers.js";

function pipe(provider, options) {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines = [];
  const waiters = [];
  let buf = "";
  output.on("data", (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      lines.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
      waiters.splice(0).forEach((w) => w());
    }
  });
  const done = serve(provider, input, output, options);
  const reply = async () => {
    while (!lines.length) await new Promise((r) => waiters.push(r));
    return lines.shift();
  };
  return { send: (...l) => input.write(l.join("\n") + "\n"), end: () => input.end(), reply, done };
}

test("correlated queries are in flight together and echo their ids", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  let running = 0;
  class Rendezvous extends Fixed {
    async query(q) {
      if (++running === 3) release();
      await gate; // only resolves once 3 queries are in flight at once
      return super.query(q);
    }
  }
  const p = pipe(new Rendezvous());
  p.send(HANDSHAKE, queryLine("q1"), queryLine("q2"), queryLine("q3"));
  assert.equal((await p.reply()).type, "handshake_ack");
  const ids = [(await p.reply()).id, (await p.reply()).id, (await p.reply()).id].sort();
  assert.deepEqual(ids, ["q1", "q2", "q3"]);
  p.end();
  await p.done;
});

test("lock-step answers in order without ids; shutdown ends serving", async () => {
  const p = pipe(new Fixed(undefined, false));
  p.send(HANDSHAKE, queryLine("a", { max_frames: 1 }), queryLine("b", { max_frames: 2 }), '{"type":"shutdown"}');
  await p.reply();
  const [first, second] = [await p.reply(), await p.reply()];
  assert.deepEqual([first.result.frames.length, second.result.frames.length], [1, 2]);
  assert.equal("id" in first, false);
  await p.done;
});

test("an oversized line is answered and serving goes on", async () => {
  const p = pipe(new Fixed(), { maxLineBytes: 200 });
  p.send(HANDSHAKE, `{"type":"query","pad":"${"x".repeat(5000)}"}`, queryLine("ok"));
  await p.reply();
  assert.equal((await p.reply()).code, "bad_request");
  assert.equal((await p.reply()).id, "ok");
  p.end();
  await p.done;
});

test("R2: a spawned provider writes only envelopes and exits 0 on shutdown", () => {
  const helpers = new URL("./helpers.js", import.meta.url).href;
  const sdk = new URL("../src/index.js", import.meta.url).href;
  const script = `import { Fixed } from ${JSON.stringify(helpers)}; import { serveStdio } from ${JSON.stringify(sdk)};
class Chatty extends Fixed { query(q) { console.log("debug output that must not reach the host"); return super.query(q); } }
serveStdio(new Chatty());`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    input: [HANDSHAKE, queryLine("q1"), '{"type":"shutdown"}', ""].join("\n"),
    timeout: 20000,
  });
  assert.equal(r.status, 0, String(r.stderr));
  assert.deepEqual(String(r.stdout).trim().split("\n").map((l) => JSON.parse(l).type), ["handshake_ack", "frames"]);
  assert.match(String(r.stderr), /debug output/);
  assert.ok(fileURLToPath(helpers));
});

function post(url, body, headers = {}, method = "POST") {
  return new Promise((resolve, reject) => {
    const h = { "Content-Type": "application/json", Authorization: "Bearer s3cret", ...headers };
    for (const k of Object.keys(h)) if (h[k] === null) delete h[k];
    const req = request(url, { method, headers: h }, (res) => {
      let data = "";
      res.on("data", (c) => (data += c));
      res.on("end", () => resolve({ status: res.statusCode, body: data ? JSON.parse(data) : null, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("a session over HTTP, and the gates", async () => {
  const server = await serveHttp(new Fixed(), { port: 0, token: "s3cret", log: false, maxBodyBytes: 4096 });
  try {
    assert.equal((await post(server.url, HANDSHAKE)).body.type, "handshake_ack");
    const r = await post(server.url, queryLine("q1"));
    assert.deepEqual([r.status, r.body.type, r.body.id], [200, "frames", "q1"]);
    assert.deepEqual([(await post(server.url, "not json")).body.code], ["bad_request"]);
    assert.equal((await post(server.url, '{"type":"shutdown"}')).status, 204);
    const unauth = await post(server.url, HANDSHAKE, { Authorization: null });
    assert.deepEqual([unauth.status, unauth.headers["www-authenticate"]], [401, "Bearer"]);
    assert.equal((await post(server.url, HANDSHAKE, { Authorization: "Bearer wrong" })).status, 401);
    assert.equal((await post(server.url.replace("/cgp", "/other"), HANDSHAKE)).status, 404);
    assert.equal((await post(server.url, undefined, {}, "GET")).status, 405);
    assert.equal((await post(server.url, HANDSHAKE, { "Content-Type": "text/plain" })).status, 415);
    assert.equal((await post(server.url, HANDSHAKE, { Host: "evil.example:80" })).status, 421);
    const big = await post(server.url, `{"type":"query","pad":"${"x".repeat(5000)}"}`);
    assert.deepEqual([big.status, big.body.code], [413, "bad_request"]);
  } finally {
    await server.close();
  }
  assert.throws(() => serveHttp(new Fixed(), { host: "0.0.0.0", port: 0 }), ExposureError);
});
