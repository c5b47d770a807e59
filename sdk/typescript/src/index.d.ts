// Published types of the Context Graph Protocol provider SDK. The wire
// objects use the protocol's member names (snake_case); SDK options use
// camelCase.

/// <reference types="node" />

import type { Readable, Writable } from "node:stream";

export declare const PROTOCOL_VERSION: "contextgraph/1.0-draft";
export type FrameKind = "snippet" | "symbol" | "fact" | "doc" | "memory" | "episode" | "graph";
export declare const KINDS: readonly FrameKind[];
export type ErrorCode =
  | "bad_request" | "unsupported_kind" | "unsupported_representation" | "incompatible_version"
  | "budget_unsatisfiable" | "unavailable" | "shutting_down" | "internal" | `${string}:${string}`;

/** `file` provenance and other kinds (wire member `type`). */
export interface Provenance {
  type: string;
  uri?: string;
  /** `L<start>-<end>`, 1-based inclusive. */
  range?: string;
  /** `sha256:` + 64 lowercase hex, over exactly the addressed bytes (F5). */
  digest?: string;
  method?: string;
  by?: string;
}

export interface Relation {
  rel: string;
  target_uri: string;
  display_name: string;
}

/** A frame as sent on the wire (this SDK builds `full` frames). */
export interface Frame {
  id: string;
  kind: FrameKind;
  title: string;
  score: number;
  token_cost: number;
  content?: string;
  content_digest?: string;
  uri?: string;
  citation_label?: string;
  recorded_at?: string;
  valid_from?: string;
  valid_to?: string;
  content_fidelity?: "exact" | "normalized" | "summarized" | "omitted";
  provenance?: Provenance[];
  relations?: Relation[];
}

/** A query's answer. */
export interface QueryResult {
  frames: Frame[];
  /** More candidates existed than fit the budget. */
  truncated: boolean;
  dropped_estimate?: number;
}

/** A parsed, checked query (unknown wire members ignored, U1). */
export interface Query {
  goal: string;
  queryText?: string;
  embedding?: number[];
  /** Q1: empty means any kind. */
  kinds: string[];
  anchors: string[];
  /** B4 */
  maxFrames: number;
  /** B1 */
  maxTokens: number;
  asOf?: string;
  /** `asOf` as nanoseconds since the epoch, or null. */
  asOfInstant: bigint | null;
  representationPreferences: string[];
  /** `queryText` when non-blank, else `goal`. */
  matchText: string;
  acceptsKind(kind: string): boolean;
}

export interface FrameIdentity {
  provider_id: string;
  frame_id: string;
  content_digest?: string;
}

export type VerdictStatus = "valid" | "stale" | "gone" | "unknown";

export interface Verdict {
  frame: FrameIdentity;
  status: VerdictStatus;
  replacement_digest?: string;
}

export interface ProviderInfo {
  name: string;
  version: string;
  data_flow: { reads: boolean; writes: boolean; egress: boolean; egress_scopes?: string[] };
}

export interface Capabilities {
  query: { kinds: string[] };
  correlation: boolean;
  graph: boolean;
  verify: boolean;
  embeddings_fingerprint?: string;
}

export interface Violation {
  anchor: string;
  path: string;
  message: string;
}

export type Envelope = { type: string; id?: string; [member: string]: unknown };

// -- wire rules -------------------------------------------------------------

/** B3: ceil(utf8_bytes(content) / 4), 0 for none. */
export declare function tokenCost(content: string | null | undefined): number;
export declare function sha256Digest(data: Uint8Array | string): string;
/** D1: digest of the content's exact UTF-8 bytes. */
export declare function contentDigest(content: string): string;
export declare function isSha256Digest(text: unknown): text is string;
/** F4: nanoseconds since the epoch, or null. */
export declare function parseTimestamp(text: unknown): bigint | null;
export declare function formatTimestamp(date: Date | number): string;
export declare function versionsCompatible(a: string, b: string): boolean;
export declare function protocolFamily(version: unknown): string | null;
export declare function parseRange(text: unknown): [number, number] | null;

// -- frames and provenance --------------------------------------------------

export interface FrameOptions {
  score?: number;
  uri?: string;
  citationLabel?: string;
  recordedAt?: string;
  validFrom?: string;
  validTo?: string | null;
  contentFidelity?: Frame["content_fidelity"];
  provenance?: Provenance[];
  relations?: Relation[];
}

/** A full frame with token_cost (B3) and content_digest (D1) computed. */
export declare function frame(id: string, kind: FrameKind, title: string, content: string, options?: FrameOptions): Frame;
export declare function relation(rel: string, targetUri: string, displayName: string): Relation;
export declare function clampScore(score: number): number;

export declare class ProvenanceError extends Error {}
export declare function pathToFileUri(path: string): string;
export declare function fileUriToPath(uri: string): string;
export declare function readRange(data: Uint8Array, start: number, end: number): Uint8Array | null;
export declare function countLines(data: Uint8Array): number;
export declare function fileProvenance(uri: string, bytes: Uint8Array, range?: string | null, method?: string, by?: string): Provenance;

export interface FileExcerpt {
  /** Exactly the bytes the range addresses. */
  bytes: Uint8Array;
  provenance: Provenance;
  start: number;
  end: number;
  range: string;
  /** `<file name> L<a>-<b>` */
  label: string;
  /** The bytes as text; ProvenanceError when not UTF-8. */
  text(): string;
  frame(id: string, kind: FrameKind, title: string, options?: FrameOptions): Frame;
}

export declare function fileExcerpt(path: string, data: Uint8Array, start: number, end: number, method?: string, by?: string): FileExcerpt;
export declare function wholeFileProvenance(path: string, data: Uint8Array, method?: string, by?: string): Provenance;

// -- queries, packing, audit -------------------------------------------------

export declare class QueryError extends Error {}
export declare function parseQuery(obj: unknown): Query;
export declare function filterKinds(candidates: Iterable<Frame>, query: Query): Frame[];
export declare function filterAsOf(candidates: Iterable<Frame>, query: Query): Frame[];
export declare function rank(frames: Frame[]): Frame[];
export declare function pack(candidates: Iterable<Frame>, query: Query, options?: { ranked?: boolean }): QueryResult;
export declare function auditFrame(frame: unknown, path?: string): Violation[];
export declare function auditAnswer(query: Query, result: unknown): Violation[];
export declare function completeVerdicts(requested: FrameIdentity[], verdicts: unknown): Verdict[];
export declare function verdictByDigest(identity: FrameIdentity, current: string | null | undefined, served?: boolean): Verdict;

// -- the provider and its runners ---------------------------------------------

export declare class ProviderError extends Error {
  constructor(code: ErrorCode, message: string);
  code: ErrorCode;
  static badRequest(message: string): ProviderError;
  static unsupportedKind(message: string): ProviderError;
  static budgetUnsatisfiable(message: string): ProviderError;
  static unavailable(message: string): ProviderError;
  static internal(message: string): ProviderError;
}

export declare class Provider {
  name: string;
  version: string;
  reads: boolean;
  writes: boolean;
  egress: boolean;
  egressScopes: string[];
  kinds: string[];
  correlation: boolean;
  graph: boolean;
  embeddingsFingerprint: string | undefined;
  info(): ProviderInfo;
  capabilities(): Capabilities;
  declaresVerify(): boolean;
  query(query: Query): QueryResult | Promise<QueryResult>;
  verify(identities: FrameIdentity[]): Verdict[] | Promise<Verdict[]>;
}

export declare class Session {
  constructor(provider: Provider, options?: { enforceHonesty?: boolean });
  readonly info: ProviderInfo;
  readonly capabilities: Capabilities;
  readonly correlated: boolean;
  handshaken: boolean;
  handleLine(line: Uint8Array | string): Promise<Envelope | null>;
  encodeReply(envelope: Envelope): string;
}

export interface ServeOptions {
  maxInFlight?: number;
  shutdownGraceMs?: number;
  maxLineBytes?: number;
  enforceHonesty?: boolean;
}

export declare function serve(provider: Provider, input: Readable, output: Writable, options?: ServeOptions): Promise<void>;
export declare function serveStdio(provider: Provider, options?: ServeOptions): Promise<never>;

export interface HttpOptions {
  host?: string;
  port?: number;
  path?: string;
  token?: string;
  maxBodyBytes?: number;
  bodyTimeoutMs?: number;
  maxInFlight?: number;
  tlsCert?: string | Uint8Array;
  tlsKey?: string | Uint8Array;
  allowInsecurePublic?: boolean;
  enforceHonesty?: boolean;
  log?: boolean;
}

export interface HttpServer {
  url: string;
  session: Session;
  close(): Promise<void>;
}

export declare class ExposureError extends Error {}
export declare function isLoopbackHost(host: string): boolean;
export declare function serveHttp(provider: Provider, options?: HttpOptions): Promise<HttpServer>;
/** Serve as the command line says: stdio, or `--http HOST:PORT [--token-env VAR]`. */
export declare function run(provider: Provider, argv?: string[]): Promise<void>;
