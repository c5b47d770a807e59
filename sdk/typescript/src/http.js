// Serve a provider over HTTP (node:http): one envelope is the body of a
// POST to the endpoint path (default /cgp), the reply envelope the response
// body (200, application/json); no reply is 204. Before the session sees a
// byte: 421 for a non-loopback Host on a loopback server (DNS rebinding),
// 401 + WWW-Authenticate: Bearer without the token (constant-time compare,
// C8), 404 other path, 405 other method, 415 not application/json, 413
// over the body limit (with a bad_request envelope), 408 body too slow.
// A non-loopback bind is refused unless TLS and a token are configured (C7)
// or `allowInsecurePublic` is set. Logs never carry a header, body or token.

import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { isIP } from "node:net";
import { timingSafeEqual, createHash } from "node:crypto";
import { Session, diag } from "./session.js";

export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

export class ExposureError extends Error {
  constructor(message) {
    super(message);
    this.name = "ExposureError";
  }
}

/** Whether `host` (no port; IPv6 possibly bracketed) is this machine. */
export function isLoopbackHost(host) {
  const bare = host.replace(/^\[/, "").replace(/\]$/, "");
  if (bare.toLowerCase() === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1" || /^(0{0,4}:){7}0{0,3}1$/.test(bare);
  return false;
}

function hostOf(header) {
  if (header.startsWith("[")) return header.slice(0, header.indexOf("]") + 1);
  const parts = header.split(":");
  return parts.length === 2 ? parts[0] : header;
}

// Equal-length digests, so the comparison time says nothing about the token.
function sameToken(given, expected) {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Start serving; resolves to `{ url, close() }` once listening.
 * Options: host ("127.0.0.1"), port (8700), path ("/cgp"), token,
 * maxBodyBytes, bodyTimeoutMs, tlsCert/tlsKey (PEM contents),
 * allowInsecurePublic, enforceHonesty, log.
 */
export function serveHttp(provider, options = {}) {
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? 8700;
  const path = options.path ?? "/cgp";
  const token = options.token !== undefined && options.token !== null ? String(options.token).trim() : undefined;
  if (token !== undefined && !/^[\x21-\x7e]+$/.test(token)) throw new Error("the bearer token must be non-empty printable ASCII without spaces");
  const loopback = isLoopbackHost(host);
  if (!loopback && !options.allowInsecurePublic && !(token && options.tlsCert)) {
    throw new ExposureError(`refusing to serve on ${host} without TLS and a bearer token (C7): bind a loopback address, or give tlsCert/tlsKey and a token, or set allowInsecurePublic behind a proxy that provides them`);
  }
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = options.log ?? true;
  const session = new Session(provider, { enforceHonesty: options.enforceHonesty ?? true });
  const limit = session.correlated ? Math.max(1, options.maxInFlight ?? 64) : 1;
  let running = 0;
  const waiting = [];
  const acquire = () => (running < limit ? (running++, Promise.resolve()) : new Promise((r) => waiting.push(r)));
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  const handler = (req, res) => {
    const reply = (status, body = "", kind = "-", headers = {}) => {
      const h = { ...headers, "Content-Length": Buffer.byteLength(body) };
      if (body) h["Content-Type"] = "application/json";
      res.writeHead(status, h);
      res.end(body);
      if (log) diag(`${session.info.name}: ${req.method} ${status} ${kind}`);
    };
    if (loopback && !isLoopbackHost(hostOf(req.headers.host ?? ""))) return reply(421, "", "non-loopback Host", { Connection: "close" });
    if (token !== undefined) {
      const auth = req.headers.authorization ?? "";
      if (!auth.startsWith("Bearer ") || !sameToken(auth.slice(7).trim(), token)) {
        return reply(401, "", "unauthorized", { "WWW-Authenticate": "Bearer", Connection: "close" });
      }
    }
    if (new URL(req.url ?? "/", "http://x").pathname !== path) return reply(404, "", "unknown path");
    if (req.method !== "POST") return reply(405, "", "method not allowed", { Allow: "POST", Connection: "close" });
    const ctype = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (ctype !== "application/json") return reply(415, "", "not application/json", { Connection: "close" });
    const declared = Number(req.headers["content-length"] ?? NaN);
    const tooBig = () => reply(413, session.encodeReply(session.badRequest(undefined, `R1: a body over this provider's ${maxBody}-byte limit; send smaller envelopes`)).trimEnd(), "error bad_request", { Connection: "close" });
    if (declared > maxBody) return tooBig();
    const chunks = [];
    let size = 0;
    let over = false;
    const timer = setTimeout(() => {
      over = true;
      reply(408, "", "body timeout", { Connection: "close" });
      req.destroy();
    }, options.bodyTimeoutMs ?? 10000);
    req.on("data", (c) => {
      if (over) return;
      size += c.length;
      if (size > maxBody) {
        over = true;
        clearTimeout(timer);
        tooBig();
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", async () => {
      clearTimeout(timer);
      if (over) return;
      await acquire();
      let env;
      try {
        env = await session.handleLine(Buffer.concat(chunks));
      } finally {
        release();
      }
      if (env === null) return reply(204, "", "no reply");
      reply(200, session.encodeReply(env).trimEnd(), env.type === "error" ? `error ${env.code}` : env.type);
    });
  };

  const server = options.tlsCert ? createHttpsServer({ cert: options.tlsCert, key: options.tlsKey }, handler) : createHttpServer(handler);
  server.keepAliveTimeout = 30000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host.replace(/^\[|\]$/g, ""), () => {
      const addr = server.address();
      const shown = addr.family === "IPv6" || addr.family === 6 ? `[${addr.address}]` : addr.address;
      const url = `${options.tlsCert ? "https" : "http"}://${shown}:${addr.port}${path}`;
      resolve({
        url,
        session,
        close: () => new Promise((r) => {
          server.close(() => r());
          server.closeAllConnections?.();
        }),
      });
    });
  });
}
