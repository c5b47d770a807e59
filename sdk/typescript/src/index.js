// Provider SDK for the Context Graph Protocol (CGP), for Node >= 18.
// Subclass `Provider`, build frames with `frame()` / `fileExcerpt()`, answer
// with `pack()`, and hand the provider to `run()` (stdio or HTTP).

export { PROTOCOL_VERSION, KINDS, tokenCost, sha256Digest, contentDigest, isSha256Digest, parseTimestamp, formatTimestamp, versionsCompatible, protocolFamily, parseRange } from "./wire.js";
export { frame, relation, clampScore } from "./frames.js";
export { ProvenanceError, pathToFileUri, fileUriToPath, readRange, countLines, fileProvenance, fileExcerpt, wholeFileProvenance } from "./provenance.js";
export { QueryError, parseQuery } from "./query.js";
export { filterKinds, filterAsOf, rank, pack } from "./pack.js";
export { auditFrame, auditAnswer, completeVerdicts, verdictByDigest } from "./audit.js";
export { Provider, ProviderError } from "./provider.js";
export { Session } from "./session.js";
export { serve, serveStdio } from "./stdio.js";
export { serveHttp, ExposureError, isLoopbackHost } from "./http.js";
export { run } from "./run.js";
