// File provenance (F5): which bytes a `file://` URI plus an `L<a>-<b>`
// range address, their digest, and the URI itself.
//
// A file is split into lines at every `\n`; line n (1-based) runs from its
// start through its terminating `\n` inclusive (a CRLF line keeps `\r\n`);
// the last line may lack a terminator. A file ending in `\n` has no empty
// line after it. The conformance suite re-reads the file and re-hashes
// exactly these bytes. A range past the last line is an error, never a
// silently shortened excerpt.

import { basename, resolve } from "node:path";
import { frame } from "./frames.js";
import { sha256Digest } from "./wire.js";

export class ProvenanceError extends Error {
  constructor(message) {
    super(message);
    this.name = "ProvenanceError";
  }
}

const KEEP = /[A-Za-z0-9\-._~/!$&'()*+,;=:@]/;

/** `path` made absolute as a `file:///…` URI, other bytes percent-encoded. */
export function pathToFileUri(path) {
  const bytes = Buffer.from(resolve(path), "utf8");
  let out = "file://";
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += b < 128 && KEEP.test(c) ? c : "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

/** The local path a `file:///…` (or `file://localhost/…`) URI names. */
export function fileUriToPath(uri) {
  if (typeof uri !== "string" || !uri.startsWith("file:")) throw new ProvenanceError(`${JSON.stringify(uri)} is not a file: URI`);
  let rest = uri.slice(5);
  if (rest.includes("?") || rest.includes("#")) throw new ProvenanceError(`${uri} has a query or fragment`);
  if (rest.startsWith("//")) {
    const slash = rest.indexOf("/", 2);
    const host = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    if (host !== "" && host !== "localhost") throw new ProvenanceError(`${uri} names host ${host}; only local files can be read`);
    rest = slash < 0 ? "" : rest.slice(slash);
  }
  if (!rest.startsWith("/")) throw new ProvenanceError(`${uri} has no absolute path`);
  const bytes = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "%") {
      const hex = rest.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new ProvenanceError(`${uri} has an invalid percent escape at byte ${i}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      for (const b of Buffer.from(rest[i], "utf8")) bytes.push(b);
    }
  }
  if (bytes.includes(0)) throw new ProvenanceError(`${uri} decodes to a NUL byte`);
  return Buffer.from(bytes).toString("utf8");
}

/** The exact bytes of lines start..=end of `data`, or null past the end. */
export function readRange(data, start, end) {
  if (start < 1 || end < start) return null;
  let offset = 0;
  let line = 0;
  let begin = -1;
  while (offset < data.length) {
    line += 1;
    const nl = data.indexOf(10, offset);
    const stop = nl < 0 ? data.length : nl + 1;
    if (line === start) begin = offset;
    if (line === end) return data.subarray(begin, stop);
    offset = stop;
  }
  return null;
}

/** Lines of `data`: the number of `\n`, plus one for an unterminated last line. */
export function countLines(data) {
  if (data.length === 0) return 0;
  let n = 0;
  for (const b of data) if (b === 10) n++;
  return data[data.length - 1] === 10 ? n : n + 1;
}

/** A `file` provenance entry whose digest is over exactly `bytes`. */
export function fileProvenance(uri, bytes, range, method = "", by = "") {
  const entry = { type: "file", uri };
  if (range !== undefined && range !== null) entry.range = range;
  entry.digest = sha256Digest(bytes);
  if (method) entry.method = method;
  if (by) entry.by = by;
  return entry;
}

/**
 * Lines start..=end of the file at `path` whose contents (read at retrieval
 * time) are `data`, with F5 provenance. Throws ProvenanceError for an
 * invalid range or one past the end of the file.
 */
export function fileExcerpt(path, data, start, end, method = "", by = "") {
  const uri = pathToFileUri(path);
  if (!(start >= 1 && end >= start)) throw new ProvenanceError(`range L${start}-${end} is not 1 <= start <= end`);
  const bytes = readRange(data, start, end);
  if (bytes === null) {
    throw new ProvenanceError(`range L${start}-${end} reaches past the end of the file, which has ${countLines(data)} line(s); clamp the range to the file`);
  }
  const range = `L${start}-${end}`;
  const provenance = fileProvenance(uri, bytes, range, method, by);
  const label = `${basename(path) || uri} ${range}`;
  return {
    bytes,
    provenance,
    start,
    end,
    range,
    label,
    text() {
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        throw new ProvenanceError(`the bytes of ${range} are not valid UTF-8; serve the file another way or skip it`);
      }
    },
    frame(id, kind, title, options = {}) {
      return frame(id, kind, title, this.text(), {
        uri,
        citationLabel: label,
        ...options,
        provenance: [provenance, ...(options.provenance ?? [])],
      });
    },
  };
}

/** The F5 provenance of a whole file (no range). */
export function wholeFileProvenance(path, data, method = "", by = "") {
  return fileProvenance(pathToFileUri(path), data, null, method, by);
}
