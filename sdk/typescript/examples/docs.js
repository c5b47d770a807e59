// A docs-folder provider: every Markdown section of a folder is a `doc`
// frame with file provenance (the section's exact lines and their digest),
// dated by the file's modification time, and verifiable by digest.
//   node docs.js [FOLDER] [--http 127.0.0.1:8700]

import { readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Provider, fileExcerpt, formatTimestamp, pack, run, verdictByDigest } from "../src/index.js";

/** @param {string} text */
const words = (text) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

class Docs extends Provider {
  name = "docs-example";
  version = "0.1.0";
  kinds = ["doc"];

  /** @param {string} root */
  constructor(root) {
    super();
    this.root = realpathSync(root);
  }

  /** The frames of one file as it is on disk now, by frame id. @param {string} rel */
  sections(rel) {
    const path = join(this.root, rel);
    const data = readFileSync(path);
    const lines = data.toString("latin1").split("\n");
    const starts = lines.flatMap((l, i) => (l.startsWith("#") ? [i + 1] : []));
    if (!starts.length) starts.push(1);
    const count = lines.length - (data[data.length - 1] === 10 ? 1 : 0);
    const recordedAt = formatTimestamp(statSync(path).mtimeMs);
    const out = new Map();
    starts.forEach((start, n) => {
      const end = n + 1 < starts.length ? starts[n + 1] - 1 : count;
      if (start < 1 || end < start) return;
      const excerpt = fileExcerpt(path, data, start, end, "file-read", this.name);
      const title = excerpt.text().split("\n")[0].replace(/^#+/, "").trim() || rel;
      const id = `${rel}#${n}`;
      out.set(id, excerpt.frame(id, "doc", title, { recordedAt }));
    });
    return out;
  }

  /** @param {string} dir @returns {string[]} */
  files(dir = this.root) {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => !e.name.startsWith("."))
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .flatMap((e) => (e.isDirectory() ? this.files(join(dir, e.name)) : e.name.endsWith(".md") ? [relative(this.root, join(dir, e.name))] : []));
  }

  /** @param {import("../src/index.js").Query} query */
  query(query) {
    const wanted = words(query.matchText);
    const candidates = [];
    for (const rel of this.files()) {
      for (const f of this.sections(rel).values()) {
        const terms = words(`${f.title} ${f.content}`);
        const hits = [...wanted].filter((w) => terms.has(w)).length;
        if (hits) candidates.push({ ...f, score: hits / wanted.size });
      }
    }
    return pack(candidates, query);
  }

  /** @param {import("../src/index.js").FrameIdentity[]} identities */
  verify(identities) {
    return identities.map((identity) => {
      const rel = identity.frame_id.slice(0, Math.max(0, identity.frame_id.lastIndexOf("#")));
      let current;
      try {
        const inside = realpathSync(join(this.root, rel)).startsWith(this.root + sep);
        current = inside && rel.endsWith(".md") ? this.sections(rel).get(identity.frame_id) : undefined;
      } catch {
        current = undefined;
      }
      return verdictByDigest(identity, current ? current.content_digest : null, current !== undefined);
    });
  }
}

const args = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
run(new Docs(args.length && !args[0].startsWith("--") ? /** @type {string} */ (args.shift()) : join(here, "sample-docs")), args);
