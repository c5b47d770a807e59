// `Session`: the protocol logic of one connection, free of any transport.
// The stdio runner and the HTTP server both ask it what each line means,
// so both transports answer every input identically.

import { auditAnswer, completeVerdicts } from "./audit.js";
import { ProviderError } from "./provider.js";
import { QueryError, parseQuery } from "./query.js";
import { PROTOCOL_VERSION, fingerprintDimensions, protocolFamily, versionsCompatible } from "./wire.js";

export const ENVELOPE_TYPES = Object.freeze(["handshake", "handshake_ack", "query", "frames", "verify", "verified", "shutdown", "error"]);
const MAX_MESSAGE_CHARS = 2048;
const MAX_LISTED = 16;
const MAX_LOGGED = 64;
const utf8 = new TextDecoder("utf-8", { fatal: true });

class Malformed extends Error {}

/** `text` cut to `limit` characters, control characters replaced. */
export function bounded(text, limit) {
  const clean = String(text).slice(0, limit + 1).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, "\ufffd");
  return clean.length <= limit ? clean : clean.slice(0, limit - 1) + "\u2026";
}

/** One diagnostic line on stderr (never stdout: over stdio it is the protocol channel). */
export function diag(text) {
  try {
    process.stderr.write(text + "\n");
  } catch {
    // nowhere left to report it
  }
}

/** One envelope as one line (JSON escapes every newline in a value). */
export function encode(envelope) {
  return JSON.stringify(envelope) + "\n";
}

function isIdentity(v) {
  return (
    v !== null && typeof v === "object" && !Array.isArray(v) &&
    typeof v.provider_id === "string" && typeof v.frame_id === "string" &&
    (v.content_digest === undefined || v.content_digest === null || typeof v.content_digest === "string")
  );
}

export class Session {
  constructor(provider, options = {}) {
    this.provider = provider;
    this.info = provider.info();
    this.capabilities = provider.capabilities();
    this.enforceHonesty = options.enforceHonesty ?? true;
    this.correlated = !!this.capabilities.correlation;
    this.verifies = !!this.capabilities.verify;
    this.handshaken = false;
    this.dims = fingerprintDimensions(this.capabilities.embeddings_fingerprint);
  }

  /** The reply to one line (null when it calls for none), running any work. */
  async handleLine(line) {
    const [tag, payload] = this.dispatchLine(line);
    if (tag === "reply") return payload;
    if (tag === "run") return this.run(payload);
    return null;
  }

  /** What one line (Buffer or string) means: ["reply", env] | ["run", job] | ["ignore"] | ["shutdown"]. Never throws (R1). */
  dispatchLine(line) {
    let value;
    try {
      const text = typeof line === "string" ? line : utf8.decode(line);
      value = JSON.parse(text);
    } catch (e) {
      const what = e instanceof TypeError ? "line is not valid UTF-8" : `line is not JSON (${e.message})`;
      return ["reply", this.badRequest(undefined, `R1: ${what}; send one JSON envelope object per line`)];
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return ["reply", this.badRequest(undefined, "R1: line is JSON but not an object; an envelope is a JSON object")];
    }
    const id = typeof value.id === "string" ? value.id : undefined;
    if (typeof value.type !== "string") {
      return ["reply", this.badRequest(this.replyId(id), `R1: object has no string "type" member (expected one of ${ENVELOPE_TYPES.join(", ")})`)];
    }
    try {
      return this.#dispatch(value.type, value, id);
    } catch (e) {
      if (e instanceof Malformed) return ["reply", this.badRequest(this.replyId(id), `R1: malformed ${value.type} envelope: ${e.message}`)];
      throw e;
    }
  }

  #dispatch(type, value, id) {
    if (type === "handshake") {
      if (typeof value.protocol_version !== "string") throw new Malformed("protocol_version must be a string");
      return ["reply", this.#handshake(value.protocol_version)];
    }
    if (type === "query") {
      if (value.id !== undefined && value.id !== null && id === undefined) throw new Malformed("id must be a string");
      const replyId = this.replyId(id);
      if (!this.handshaken) return ["reply", this.#handshakeFirst(replyId, "query")];
      let query;
      try {
        query = parseQuery(value.query);
      } catch (e) {
        if (e instanceof QueryError) return ["reply", this.badRequest(replyId, `invalid query: ${e.message}`)];
        throw e;
      }
      if (query.embedding !== undefined) {
        const problem = this.dims === null
          ? "E1: this provider declared no embedding space; it cannot accept a query vector"
          : query.embedding.length !== this.dims ? `E1: embedding has ${query.embedding.length} dimensions but this provider's space has ${this.dims}` : null;
        if (problem) return ["reply", this.badRequest(replyId, `invalid query: ${problem}`)];
      }
      return ["run", { replyId, kind: "query", payload: query }];
    }
    if (type === "verify") {
      const frames = value.request && typeof value.request === "object" ? value.request.frames : undefined;
      if (!Array.isArray(frames) || !frames.every(isIdentity)) throw new Malformed("request.frames must be an array of {provider_id, frame_id, content_digest?} objects");
      if (!this.handshaken) return ["reply", this.#handshakeFirst(undefined, "verify")];
      if (!this.verifies) return ["reply", this.badRequest(undefined, "V2: this provider does not verify (capabilities.verify is false); re-query instead")];
      const identities = frames.map((i) => {
        const o = { provider_id: i.provider_id, frame_id: i.frame_id };
        if (typeof i.content_digest === "string") o.content_digest = i.content_digest;
        return o;
      });
      return ["run", { replyId: undefined, kind: "verify", payload: identities }];
    }
    if (type === "shutdown") return ["shutdown"];
    if (type === "error") return ["ignore"];
    if (ENVELOPE_TYPES.includes(type)) {
      return ["reply", this.badRequest(this.replyId(id), `${type} is sent by a provider to a host, not to a provider; send handshake, query, verify or shutdown`)];
    }
    if (id !== undefined) {
      return ["reply", this.badRequest(this.replyId(id), `unknown envelope type ${JSON.stringify(bounded(type, 64))}; this provider serves handshake, query, verify and shutdown`)];
    }
    return ["ignore"]; // an unknown notification (U1)
  }

  #handshake(hostVersion) {
    if (versionsCompatible(hostVersion, PROTOCOL_VERSION)) {
      this.handshaken = true;
      return { type: "handshake_ack", protocol_version: PROTOCOL_VERSION, provider: this.info, capabilities: this.capabilities };
    }
    const ours = protocolFamily(PROTOCOL_VERSION);
    const family = protocolFamily(hostVersion);
    const theirs = family
      ? `the host speaks family ${family} (${bounded(hostVersion, 64)})`
      : `the host's version ${JSON.stringify(bounded(hostVersion, 64))} is not a protocol version (contextgraph/<major>.<minor>[-draft]) and so belongs to no family`;
    return this.error(undefined, "incompatible_version", `H3: ${theirs}, but this provider speaks family ${ours} (${PROTOCOL_VERSION}); handshake again with a ${ours}.x version or use another provider`);
  }

  /** Run provider work and build its reply; never rejects. */
  async run(job) {
    if (job.kind === "verify") {
      try {
        const verdicts = await this.provider.verify(job.payload);
        return { type: "verified", response: { verdicts: completeVerdicts(job.payload, verdicts) } };
      } catch (e) {
        return this.#crashed(undefined, "verify", e);
      }
    }
    const { replyId, payload: query } = job;
    let result;
    try {
      result = await this.provider.query(query);
    } catch (e) {
      if (e instanceof ProviderError) {
        const message = typeof e.message === "string" && e.message.trim() ? e.message : `the provider failed with ${e.code} and gave no message`;
        return this.error(replyId, typeof e.code === "string" && e.code ? e.code : "internal", message, false);
      }
      return this.#crashed(replyId, "query", e);
    }
    if (this.enforceHonesty) {
      const violations = auditAnswer(query, result);
      if (violations.length) return this.#dishonest(replyId, violations);
    }
    const env = { type: "frames" };
    if (replyId !== undefined) env.id = replyId;
    env.result = result;
    return env;
  }

  #crashed(replyId, what, e) {
    diag(`${this.info.name}: ${what} handler threw: ${e && e.stack ? e.stack : e}`);
    const kind = e && e.name ? e.name : typeof e;
    return this.error(replyId, "internal", `the ${what} handler threw ${kind} (${bounded(e && e.message ? e.message : String(e), 256)}); this is a provider bug, report it to the provider's author`);
  }

  #dishonest(replyId, violations) {
    diag(`${this.info.name}: honesty guard withheld frames breaking ${violations.length} rule(s):`);
    for (const v of violations.slice(0, MAX_LOGGED)) diag(`  ${v.anchor} at ${v.path}: ${v.message}`);
    let listed = violations.slice(0, MAX_LISTED).map((v) => `${v.anchor} at ${v.path}`).join(", ");
    if (violations.length > MAX_LISTED) listed += ` and ${violations.length - MAX_LISTED} more`;
    return this.error(replyId, "internal", `honesty guard withheld dishonest frames (${listed}); this is a provider bug, see the provider's stderr for details`);
  }

  /** H4: echo the id only when correlation was declared. */
  replyId(id) {
    return this.correlated ? id : undefined;
  }

  #handshakeFirst(replyId, what) {
    return this.badRequest(replyId, `${what} before the handshake: handshake first (no query payload moves before a handshake_ack)`);
  }

  badRequest(replyId, message) {
    return this.error(replyId, "bad_request", message);
  }

  error(replyId, code, message, prefix = true) {
    const env = { type: "error" };
    if (replyId !== undefined) env.id = replyId;
    env.code = code;
    env.message = bounded(prefix ? `${this.info.name}: ${message}` : message, MAX_MESSAGE_CHARS);
    return env;
  }

  /** `encode`, or an `internal` error when the answer is not JSON (a BigInt, a cycle). */
  encodeReply(envelope) {
    try {
      return encode(envelope);
    } catch (e) {
      diag(`${this.info.name}: the reply could not be encoded as JSON: ${e.message}`);
      return encode(this.error(typeof envelope.id === "string" ? envelope.id : undefined, "internal", `the reply could not be encoded as JSON (${bounded(e.message, 256)}); this is a provider bug`));
    }
  }
}
