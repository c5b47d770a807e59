// A key-value "facts" provider: each fact has a value per period, and a
// query pinned with `as_of` gets the value that held then (never a later one).
//   node facts.js [FACTS.json] [--http 127.0.0.1:8700]

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Provider, frame, pack, parseTimestamp, run, verdictByDigest } from "../src/index.js";

/** @param {string} text */
const words = (text) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/** @typedef {{ key: string, value: string, valid_from: string, note?: string }} Row */

class Facts extends Provider {
  name = "facts-example";
  version = "0.1.0";
  kinds = ["fact"];
  /** @type {Map<string, { frame: import("../src/index.js").Frame, terms: Set<string> }>} */
  frames = new Map();

  /** @param {string} path */
  constructor(path) {
    super();
    /** @type {Row[]} */
    const rows = JSON.parse(readFileSync(path, "utf8"));
    const at = (/** @type {Row} */ r) => parseTimestamp(r.valid_from) ?? 0n;
    rows.sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : 0));
    // Per key, its versions oldest first; a version is valid until the next.
    /** @type {Map<string, Row[]>} */
    const byKey = new Map();
    for (const row of rows) byKey.set(row.key, [...(byKey.get(row.key) ?? []), row]);
    for (const [key, versions] of byKey) {
      versions.forEach((row, i) => {
        const text = `${key} = ${row.value}`;
        const f = frame(`${key}@${row.valid_from}`, "fact", key, text, {
          validFrom: row.valid_from,
          validTo: versions[i + 1]?.valid_from,
          citationLabel: `${key} (from ${row.valid_from})`,
        });
        this.frames.set(f.id, { frame: f, terms: words(`${text} ${row.note ?? ""}`) });
      });
    }
  }

  /** @param {import("../src/index.js").Query} query */
  query(query) {
    const wanted = words(query.matchText);
    const pin = query.asOfInstant;
    const candidates = [];
    for (const { frame: f, terms } of this.frames.values()) {
      const hits = [...wanted].filter((w) => terms.has(w)).length;
      if (!hits) continue;
      // The version in force at the pin (or now): started, not yet ended.
      if (pin !== null && (parseTimestamp(f.valid_from) ?? 0n) > pin) continue;
      const end = f.valid_to === undefined ? null : parseTimestamp(f.valid_to);
      if (end !== null && (pin === null || end <= pin)) continue;
      candidates.push({ ...f, score: hits / wanted.size });
    }
    return pack(candidates, query);
  }

  /** @param {import("../src/index.js").FrameIdentity[]} identities */
  verify(identities) {
    return identities.map((identity) => {
      const held = this.frames.get(identity.frame_id);
      return verdictByDigest(identity, held ? held.frame.content_digest : null, held !== undefined);
    });
  }
}

const args = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const path = args.length && !args[0].startsWith("--") ? /** @type {string} */ (args.shift()) : join(here, "facts.json");
run(new Facts(path), args);
