// Type-checked with `tsc` (never run): a provider written in TypeScript
// against the published types, so a change to index.d.ts that breaks an
// author's code fails `npm run typecheck`.

import { Provider, ProviderError, frame, pack, run, verdictByDigest, type FrameIdentity, type Query, type QueryResult, type Verdict } from "../src/index.js";

class Notes extends Provider {
  override name = "notes";
  override version = "1.0.0";
  override kinds = ["doc"];
  private notes = [frame("n1", "doc", "Retry policy", "Retries back off exponentially.", { recordedAt: "2026-01-01T00:00:00Z" })];

  override async query(query: Query): Promise<QueryResult> {
    if (query.kinds.length && !query.acceptsKind("doc")) throw ProviderError.unsupportedKind("only doc frames here");
    return pack(this.notes, query);
  }

  override verify(identities: FrameIdentity[]): Verdict[] {
    return identities.map((i) => verdictByDigest(i, this.notes.find((n) => n.id === i.frame_id)?.content_digest ?? null));
  }
}

export const started: Promise<void> = run(new Notes(), []);
