// The stdio runner: one envelope per line.
// - Lock-step (no `correlation`): requests answered one at a time, in
//   order, replies without `id`.
// - Correlated: up to `maxInFlight` requests outstanding (async `query`
//   calls run concurrently), each reply echoing its `id` (H4); at the limit
//   the runner stops reading (backpressure).
// - `shutdown` or end of input: stop reading, let in-flight work finish
//   within `shutdownGraceMs`, flush, resolve (R2).
// - A line over `maxLineBytes` is discarded and answered `bad_request` (R1).
// `serveStdio` also points `process.stdout.write` (and so console.log) at
// stderr, so stray output cannot corrupt the protocol channel.

import { Session, diag } from "./session.js";

export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Serve `provider` over `input` (Readable) and `output` (Writable); resolves when serving ended. */
export function serve(provider, input, output, options = {}) {
  const maxInFlight = Math.max(1, options.maxInFlight ?? 64);
  const grace = options.shutdownGraceMs ?? 2000;
  const maxLine = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const write = options.write ?? ((text) => output.write(text));
  const session = new Session(provider, { enforceHonesty: options.enforceHonesty ?? true });

  return new Promise((resolve) => {
    let pending = [];
    let partial = [];
    let partialBytes = 0;
    let skipping = -1; // >= 0: inside an oversized line, bytes dropped so far
    let inFlight = 0;
    let ended = false;
    let closed = false;
    let queue = Promise.resolve(); // lock-step chain
    let outBuf = [];
    let flushScheduled = false;
    let paused = false;

    const flush = () => {
      flushScheduled = false;
      if (outBuf.length && !closed) {
        const text = outBuf.join("");
        outBuf = [];
        try {
          write(text);
        } catch {
          closed = true;
        }
      }
    };
    const send = (text) => {
      if (closed) return;
      outBuf.push(text);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
    };
    const finish = () => {
      if (closed) return;
      flush();
      closed = true;
      input.removeListener("data", onData);
      input.removeListener("end", onEnd);
      if (typeof input.pause === "function") input.pause();
      resolve();
    };
    const stop = () => {
      if (ended) return;
      ended = true;
      if (inFlight === 0) return queue.then(() => setImmediate(finish));
      const timer = setTimeout(() => {
        diag(`${session.info.name}: ${inFlight} request(s) still running after the ${grace} ms shutdown grace; their replies are dropped`);
        finish();
      }, grace);
      waiters.push(() => {
        clearTimeout(timer);
        setImmediate(finish);
      });
    };
    const waiters = [];
    const done = () => {
      inFlight--;
      if (paused && inFlight < maxInFlight && !ended) {
        paused = false;
        input.resume();
        drainPending();
      }
      if (ended && inFlight === 0) waiters.splice(0).forEach((w) => w());
    };

    const handle = (line) => {
      if (ended) return;
      if (typeof line === "number") {
        send(session.encodeReply(session.badRequest(undefined, `R1: a line of ${line} bytes exceeds this provider's ${maxLine}-byte line limit and was discarded; send smaller envelopes`)));
        return;
      }
      const [tag, payload] = session.dispatchLine(line);
      if (tag === "reply") send(session.encodeReply(payload));
      else if (tag === "shutdown") stop();
      else if (tag === "run") {
        inFlight++;
        const run = () => session.run(payload).then((env) => {
          send(session.encodeReply(env));
          done();
        });
        if (session.correlated) run();
        else queue = queue.then(run);
      }
    };
    const drainPending = () => {
      while (pending.length && !paused && !ended) {
        handle(pending.shift());
        if (inFlight >= maxInFlight) pause();
      }
    };
    const pause = () => {
      if (!paused) {
        paused = true;
        input.pause();
      }
    };
    const onLine = (line) => {
      if (paused || pending.length) pending.push(line);
      else {
        handle(line);
        if (inFlight >= maxInFlight) pause();
      }
    };
    const onData = (chunk) => {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl < 0) break;
        const piece = chunk.subarray(start, nl);
        start = nl + 1;
        if (skipping >= 0) {
          onLine(skipping + piece.length);
          skipping = -1;
          continue;
        }
        let line = piece;
        if (partial.length) {
          line = Buffer.concat([...partial, piece]);
          partial = [];
          partialBytes = 0;
        }
        if (line.length > maxLine) onLine(line.length);
        else if (line.some((b) => b !== 32 && b !== 9 && b !== 13)) onLine(line);
      }
      const rest = chunk.subarray(start);
      if (!rest.length) return;
      if (skipping >= 0) skipping += rest.length;
      else {
        partial.push(Buffer.from(rest));
        partialBytes += rest.length;
        if (partialBytes > maxLine) {
          skipping = partialBytes;
          partial = [];
          partialBytes = 0;
        }
      }
    };
    const onEnd = () => {
      if (skipping >= 0) onLine(skipping);
      else if (partial.length) onLine(Buffer.concat(partial));
      partial = [];
      const wait = () => (pending.length && !ended ? setImmediate(wait) : stop());
      wait();
    };
    input.on("data", onData);
    input.on("end", onEnd);
    input.on("error", onEnd);
    if (output && typeof output.on === "function") output.on("error", () => { closed = true; stop(); });
  });
}

/** Serve `provider` on this process's stdin/stdout, then exit 0 (R2). */
export async function serveStdio(provider, options = {}) {
  const stdout = process.stdout;
  const protocolWrite = stdout.write.bind(stdout);
  // A stray console.log now lands on stderr instead of corrupting the channel.
  stdout.write = (...args) => process.stderr.write(...args);
  await serve(provider, process.stdin, stdout, { ...options, write: (text) => protocolWrite(text) });
  await new Promise((resolve) => protocolWrite("", () => resolve()));
  process.exit(0);
}
