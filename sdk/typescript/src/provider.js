// What a provider author implements: a `Provider` subclass, and the
// `ProviderError` it throws instead of answering with frames.

/** A failure reported instead of frames: a code for the machine, a message for a person. */
export class ProviderError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "ProviderError";
    this.code = code;
  }
  static badRequest(message) {
    return new ProviderError("bad_request", message);
  }
  static unsupportedKind(message) {
    return new ProviderError("unsupported_kind", message);
  }
  static budgetUnsatisfiable(message) {
    return new ProviderError("budget_unsatisfiable", message);
  }
  static unavailable(message) {
    return new ProviderError("unavailable", message);
  }
  static internal(message) {
    return new ProviderError("internal", message);
  }
}

/**
 * Subclass this: set the identity and capability fields, implement
 * `query` (it may be async: with `correlation`, several run at once), and
 * optionally `verify`. Everything protocol-shaped is the runner's job.
 */
export class Provider {
  name = "";
  version = "";
  reads = true;
  writes = false;
  egress = false;
  /** @type {string[]} */
  egressScopes = [];
  /** @type {string[]} */
  kinds = [];
  correlation = true;
  graph = false;
  /** @type {string | undefined} */
  embeddingsFingerprint = undefined;

  info() {
    const dataFlow = { reads: !!this.reads, writes: !!this.writes, egress: !!this.egress };
    if (this.egressScopes.length) dataFlow.egress_scopes = [...this.egressScopes];
    return { name: this.name, version: this.version, data_flow: dataFlow };
  }

  /** Whether this provider overrides `verify` (then `capabilities.verify`). */
  declaresVerify() {
    return this.verify !== Provider.prototype.verify;
  }

  capabilities() {
    const caps = {
      query: { kinds: [...this.kinds] },
      correlation: !!this.correlation,
      graph: !!this.graph,
      verify: this.declaresVerify(),
    };
    if (this.embeddingsFingerprint !== undefined) caps.embeddings_fingerprint = this.embeddingsFingerprint;
    return caps;
  }

  // eslint-disable-next-line no-unused-vars
  query(_query) {
    throw new Error("implement Provider.query");
  }

  verify(identities) {
    return identities.map((frame) => ({ frame: { ...frame }, status: "unknown" }));
  }
}
