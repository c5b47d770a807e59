import { Provider, frame, pack } from "../src/index.js";

export const HANDSHAKE = '{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}';

export function queryLine(id, extra = {}) {
  const env = { type: "query", query: { goal: "retry policy", max_frames: 5, max_tokens: 1000, ...extra } };
  if (id !== undefined) env.id = id;
  return JSON.stringify(env);
}

/** Answers every query with the same frames, packed. */
export class Fixed extends Provider {
  name = "fixed";
  version = "1";
  kinds = ["doc", "fact"];
  constructor(frames, correlation = true) {
    super();
    this.correlation = correlation;
    this.frames = frames ?? [
      frame("a", "doc", "A", "alpha ".repeat(10), { score: 0.9, recordedAt: "2026-01-01T00:00:00Z" }),
      frame("b", "fact", "B", "beta", { score: 0.5, validFrom: "2026-02-01T00:00:00.5Z" }),
      frame("c", "doc", "C", "gamma ".repeat(40), { score: 0.7 }),
    ];
  }
  query(query) {
    return pack(this.frames, query);
  }
}
