//! The files `cgp new provider` writes, per language. `{{name}}` is the
//! provider name, `{{module}}` its identifier form (`-` → `_`), and
//! `{{sdk_dependency}}` the Rust SDK dependency lines.
//!
//! Python and TypeScript projects carry a copy of their SDK (standard
//! library / Node built-ins only, so nothing is downloaded); the copy is
//! this repository's `sdk/` tree, embedded at build time so a `cgp` binary
//! always writes the SDK it was built and tested with.

/// One file of a project: its path relative to the project root, and text.
pub(crate) type File = (&'static str, &'static str);

/// Sample content every scaffold serves, matching the conformance suite's
/// default goals so `cgp inspect --strict` has frames to judge.
pub(crate) const CONTENT: [File; 2] = [
    (
        "content/getting-started.md",
        "# Getting started\n\nAn overview and introduction: what this provider serves and how to\nrun it. Replace the files in this folder with your own content.\n",
    ),
    (
        "content/retry-policy.md",
        "# Retry policy\n\nA failed request is retried with exponential backoff, up to three\nattempts, and every attempt has its own timeouts.\n",
    ),
];

pub(crate) const RUST: [File; 5] = [
    (
        "Cargo.toml",
        r##"[package]
name = "{{name}}"
version = "0.1.0"
edition = "2021"
publish = false

# A project of its own, not a member of an enclosing workspace.
[workspace]

[dependencies]
{{sdk_dependency}}
"##,
    ),
    (".gitignore", "/target\n"),
    (
        "src/main.rs",
        r##"//! {{name}}: a Context Graph Protocol provider (scaffolded by `cgp new provider`).
//!
//! Serves every `.md` and `.txt` file of a folder (default `./content`) as
//! one `doc` frame, with whole-file provenance (F5), dated by its
//! modification time (so `as_of` can exclude it), and verifiable by digest.
//! Run it under a host with `cgp`, or check it with
//! `cgp inspect stdio --strict -- cargo run --quiet -- content`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use contextgraph_provider_sdk::{
    pack, path_to_file_uri, serve_stdio, whole_file_provenance, FrameBuilder, Provider,
    ProviderError,
};
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, DataFlow, FrameKind,
    FrameVerdict, ProviderInfo, QueryCapability, Timestamp, Verdict, VerifyRequest,
    VerifyResponse,
};

const NAME: &str = "{{name}}";

struct Content {
    root: PathBuf,
}

fn words(text: &str) -> Vec<String> {
    let mut w: Vec<String> = text
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    w.sort();
    w.dedup();
    w
}

impl Content {
    /// Every servable file as a frame, as it is on disk now.
    fn frames(&self) -> Vec<ContextFrame> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&self.root)
            .map(|dir| dir.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        paths.retain(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("md" | "txt")));
        paths.sort();
        paths.iter().filter_map(|p| load(p)).collect()
    }
}

/// One file as a frame; `None` when it cannot be read or is not UTF-8.
fn load(path: &Path) -> Option<ContextFrame> {
    let data = std::fs::read(path).ok()?;
    let text = String::from_utf8(data.clone()).ok()?;
    let name = path.file_name()?.to_string_lossy().into_owned();
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let provenance = whole_file_provenance(path, &data, "file-read", NAME).ok()?;
    Some(
        FrameBuilder::new(name.clone(), FrameKind::Doc, name, text)
            .uri(path_to_file_uri(path).ok()?)
            .recorded_at(Timestamp::from_system_time(modified))
            .provenance(provenance)
            .build(),
    )
}

impl Provider for Content {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            data_flow: DataFlow {
                reads: true,
                ..DataFlow::default()
            },
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Doc],
            },
            correlation: true,
            verify: true,
            ..Capabilities::default()
        }
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let wanted = words(query.match_text());
        let mut candidates = Vec::new();
        for mut frame in self.frames() {
            let terms = words(frame.content.as_deref().unwrap_or_default());
            let hits = wanted.iter().filter(|w| terms.binary_search(w).is_ok()).count();
            if hits > 0 {
                frame.score = hits as f32 / wanted.len() as f32;
                candidates.push(frame);
            }
        }
        // pack: kinds and as_of filters, budget, truthful `truncated`.
        Ok(pack(candidates, query))
    }

    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        let current = self.frames();
        let verdicts = request
            .frames
            .iter()
            .map(|id| {
                let served = current.iter().find(|f| f.id == id.frame_id);
                let verdict = match (served, &id.content_digest) {
                    (None, _) => Verdict::Gone,
                    (Some(_), None) => Verdict::Unknown,
                    (Some(f), Some(held)) if f.content_digest.as_ref() == Some(held) => Verdict::Valid,
                    (Some(f), Some(_)) => Verdict::Stale {
                        replacement_digest: f.content_digest.clone(),
                    },
                };
                FrameVerdict {
                    frame: id.clone(),
                    verdict,
                }
            })
            .collect();
        VerifyResponse { verdicts }
    }
}

fn main() -> ExitCode {
    let root = std::env::args_os().nth(1).map_or_else(|| PathBuf::from("content"), PathBuf::from);
    let root = match std::fs::canonicalize(&root) {
        Ok(root) => root,
        Err(e) => {
            eprintln!("{NAME}: cannot open {}: {e}", root.display());
            return ExitCode::FAILURE;
        }
    };
    match serve_stdio(Content { root }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{NAME}: {e}");
            ExitCode::FAILURE
        }
    }
}
"##,
    ),
    (
        "tests/conformance.rs",
        r##"//! The conformance suite against this provider: `cgp inspect stdio --strict`
//! must pass (every check green, none skipped). `cgp` is taken from the
//! `CGP` environment variable, else from PATH.

use std::process::Command;

#[test]
fn cgp_inspect_strict_passes() {
    let cgp = std::env::var("CGP").unwrap_or_else(|_| "cgp".to_owned());
    let content = concat!(env!("CARGO_MANIFEST_DIR"), "/content");
    let output = Command::new(&cgp)
        .args(["inspect", "stdio", "--strict", "--"])
        .arg(env!("CARGO_BIN_EXE_{{name}}"))
        .arg(content)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cgp:?} ({e}); put cgp on PATH or set CGP to its path"));
    assert!(
        output.status.success(),
        "cgp inspect --strict failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
"##,
    ),
    (
        "README.md",
        r##"# {{name}}

A Context Graph Protocol provider written in Rust with
`contextgraph-provider-sdk`. It serves the files of `content/` as `doc`
frames; edit `src/main.rs` to serve your own data.

    cargo build
    cgp inspect stdio --strict -- target/debug/{{name}} content   # certify it
    cargo test                                                   # the same, as a test (CGP=path/to/cgp if not on PATH)

Use it from a host by adding it to `cgp.toml` as a stdio provider whose
command is `target/debug/{{name}}` with the content folder as argument.
"##,
    ),
];

pub(crate) const PYTHON: [File; 5] = [
    (
        "pyproject.toml",
        r##"[project]
name = "{{name}}"
version = "0.1.0"
description = "A Context Graph Protocol provider"
requires-python = ">=3.9"
dependencies = []
"##,
    ),
    (".gitignore", "__pycache__/\n"),
    (
        "provider.py",
        r##""""{{name}}: a Context Graph Protocol provider (scaffolded by `cgp new provider`).

Serves every `.md` and `.txt` file of a folder (default ./content) as one
`doc` frame, with whole-file provenance (F5), dated by its modification time
(so `as_of` can exclude it), and verifiable by digest.

    python3 provider.py [FOLDER]                       # stdio, for a host to spawn
    python3 provider.py [FOLDER] --http 127.0.0.1:8700  # HTTP on loopback
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vendor"))

from contextgraph_provider import (  # after the sys.path line above, on purpose
    Provider, format_timestamp, frame, pack, path_to_file_uri, run, verdict_by_digest,
    whole_file_provenance,
)

WORD = re.compile(r"[a-z0-9]+")


class Content(Provider):
    name = "{{name}}"
    version = "0.1.0"
    kinds = ["doc"]

    def __init__(self, root):
        self.root = os.path.realpath(root)

    def frames(self):
        """Every servable file as a frame, as it is on disk now."""
        out = []
        for name in sorted(os.listdir(self.root)):
            path = os.path.join(self.root, name)
            if not name.endswith((".md", ".txt")) or not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read()
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            out.append(frame(
                name, "doc", name, text,
                uri=path_to_file_uri(path),
                recorded_at=format_timestamp(os.stat(path).st_mtime),
                provenance=[whole_file_provenance(path, data, method="file-read", by=self.name)],
            ))
        return out

    def query(self, query):
        wanted = set(WORD.findall(query.match_text.lower()))
        candidates = []
        for f in self.frames():
            hits = len(wanted & set(WORD.findall(f["content"].lower())))
            if hits:
                candidates.append(dict(f, score=hits / len(wanted)))
        # pack: kinds and as_of filters, budget, truthful `truncated`.
        return pack(candidates, query)

    def verify(self, identities):
        current = {f["id"]: f["content_digest"] for f in self.frames()}
        return [verdict_by_digest(i, current.get(i["frame_id"]), i["frame_id"] in current) for i in identities]


if __name__ == "__main__":
    args = sys.argv[1:]
    root = args.pop(0) if args and not args[0].startswith("--") else os.path.join(HERE, "content")
    sys.exit(run(Content(root), args))
"##,
    ),
    (
        "tests/test_conformance.py",
        r##""""The conformance suite against this provider: `cgp inspect stdio --strict`
must pass. `cgp` is taken from the CGP environment variable, else PATH."""

import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Conformance(unittest.TestCase):
    def test_cgp_inspect_strict_passes(self):
        cgp = os.environ.get("CGP", "cgp")
        command = [cgp, "inspect", "stdio", "--strict", "--", sys.executable, os.path.join(ROOT, "provider.py")]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        except FileNotFoundError:
            self.fail("cannot run %r; put cgp on PATH or set CGP to its path" % cgp)
        self.assertEqual(done.returncode, 0, "cgp inspect --strict failed:\n" + done.stdout + done.stderr)


if __name__ == "__main__":
    unittest.main()
"##,
    ),
    (
        "README.md",
        r##"# {{name}}

A Context Graph Protocol provider written in Python (3.9+, standard library
only; the SDK is copied into `vendor/`). It serves the files of `content/`
as `doc` frames; edit `provider.py` to serve your own data.

    cgp inspect stdio --strict -- python3 provider.py        # certify it
    python3 -m unittest discover -s tests                    # the same, as a test (CGP=path/to/cgp if not on PATH)
    python3 provider.py --http 127.0.0.1:8700                # serve over HTTP on loopback

Use it from a host by adding it to `cgp.toml` as a stdio provider whose
command is `python3 provider.py`.
"##,
    ),
];

pub(crate) const TYPESCRIPT: [File; 6] = [
    (
        "package.json",
        r##"{
  "name": "{{name}}",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "engines": { "node": ">=18" },
  "scripts": {
    "start": "node provider.js",
    "test": "node --test test/"
  }
}
"##,
    ),
    (".gitignore", "node_modules/\n"),
    (
        "tsconfig.json",
        r##"{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noEmit": true,
    "allowJs": true,
    "checkJs": true
  },
  "include": ["provider.js"]
}
"##,
    ),
    (
        "provider.js",
        r##"// {{name}}: a Context Graph Protocol provider (scaffolded by `cgp new provider`).
//
// Serves every `.md` and `.txt` file of a folder (default ./content) as one
// `doc` frame, with whole-file provenance (F5), dated by its modification
// time (so `as_of` can exclude it), and verifiable by digest. Plain ES
// modules with JSDoc types: runs on Node >= 18 with nothing to install, and
// type-checks against the SDK's published types
// (`npm i -D typescript @types/node && npx tsc`).
//
//   node provider.js [FOLDER]                        # stdio, for a host to spawn
//   node provider.js [FOLDER] --http 127.0.0.1:8700  # HTTP on loopback

import { readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Provider, formatTimestamp, frame, pack, pathToFileUri, run, verdictByDigest, wholeFileProvenance,
} from "./vendor/contextgraph-provider/index.js";

/** @param {string} text */
const words = (text) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

class Content extends Provider {
  name = "{{name}}";
  version = "0.1.0";
  kinds = ["doc"];

  /** @param {string} root */
  constructor(root) {
    super();
    this.root = realpathSync(root);
  }

  /** Every servable file as a frame, as it is on disk now. */
  frames() {
    /** @type {import("./vendor/contextgraph-provider/index.js").Frame[]} */
    const out = [];
    for (const name of readdirSync(this.root).sort()) {
      const path = join(this.root, name);
      if (!/\.(md|txt)$/.test(name) || !statSync(path).isFile()) continue;
      const data = readFileSync(path);
      let text;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(data);
      } catch {
        continue;
      }
      out.push(frame(name, "doc", name, text, {
        uri: pathToFileUri(path),
        recordedAt: formatTimestamp(statSync(path).mtimeMs),
        provenance: [wholeFileProvenance(path, data, "file-read", this.name)],
      }));
    }
    return out;
  }

  /** @param {import("./vendor/contextgraph-provider/index.js").Query} query */
  query(query) {
    const wanted = words(query.matchText);
    const candidates = [];
    for (const f of this.frames()) {
      const terms = words(f.content ?? "");
      const hits = [...wanted].filter((w) => terms.has(w)).length;
      if (hits) candidates.push({ ...f, score: hits / wanted.size });
    }
    // pack: kinds and as_of filters, budget, truthful `truncated`.
    return pack(candidates, query);
  }

  /** @param {import("./vendor/contextgraph-provider/index.js").FrameIdentity[]} identities */
  verify(identities) {
    const current = new Map(this.frames().map((f) => [f.id, f.content_digest]));
    return identities.map((i) => verdictByDigest(i, current.get(i.frame_id), current.has(i.frame_id)));
  }
}

const args = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const root = args.length && !args[0].startsWith("--") ? /** @type {string} */ (args.shift()) : join(here, "content");
run(new Content(root), args);
"##,
    ),
    (
        "test/conformance.test.js",
        r##"// The conformance suite against this provider: `cgp inspect stdio --strict`
// must pass. `cgp` is taken from the CGP environment variable, else PATH.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

test("cgp inspect --strict passes", () => {
  const cgp = process.env.CGP ?? "cgp";
  const provider = fileURLToPath(new URL("../provider.js", import.meta.url));
  const done = spawnSync(cgp, ["inspect", "stdio", "--strict", "--", process.execPath, provider], { encoding: "utf8", timeout: 120000 });
  assert.equal(done.error, undefined, `cannot run ${cgp}; put cgp on PATH or set CGP to its path`);
  assert.equal(done.status, 0, `cgp inspect --strict failed:\n${done.stdout}${done.stderr}`);
});
"##,
    ),
    (
        "README.md",
        r##"# {{name}}

A Context Graph Protocol provider for Node.js (18+, no dependencies; the SDK
is copied into `vendor/`). It serves the files of `content/` as `doc`
frames; edit `provider.js` to serve your own data.

    cgp inspect stdio --strict -- node provider.js       # certify it
    npm test                                             # the same, as a test (CGP=path/to/cgp if not on PATH)
    node provider.js --http 127.0.0.1:8700               # serve over HTTP on loopback

Use it from a host by adding it to `cgp.toml` as a stdio provider whose
command is `node provider.js`.
"##,
    ),
];

/// The Python SDK, copied into `vendor/contextgraph_provider/`.
pub(crate) const PYTHON_SDK: [File; 13] = [
    (
        "__init__.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/__init__.py"),
    ),
    (
        "audit.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/audit.py"),
    ),
    (
        "frames.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/frames.py"),
    ),
    (
        "http.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/http.py"),
    ),
    (
        "pack.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/pack.py"),
    ),
    (
        "provenance.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/provenance.py"),
    ),
    (
        "provider.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/provider.py"),
    ),
    (
        "query.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/query.py"),
    ),
    (
        "run.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/run.py"),
    ),
    (
        "session.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/session.py"),
    ),
    (
        "stdio.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/stdio.py"),
    ),
    (
        "wire.py",
        include_str!("../../../../sdk/python/src/contextgraph_provider/wire.py"),
    ),
    ("py.typed", ""),
];

/// The TypeScript SDK, copied into `vendor/contextgraph-provider/`.
pub(crate) const TYPESCRIPT_SDK: [File; 14] = [
    ("package.json", "{\n  \"name\": \"contextgraph-provider\",\n  \"type\": \"module\",\n  \"main\": \"./index.js\",\n  \"types\": \"./index.d.ts\"\n}\n"),
    ("index.js", include_str!("../../../../sdk/typescript/src/index.js")),
    ("index.d.ts", include_str!("../../../../sdk/typescript/src/index.d.ts")),
    ("audit.js", include_str!("../../../../sdk/typescript/src/audit.js")),
    ("frames.js", include_str!("../../../../sdk/typescript/src/frames.js")),
    ("http.js", include_str!("../../../../sdk/typescript/src/http.js")),
    ("pack.js", include_str!("../../../../sdk/typescript/src/pack.js")),
    ("provenance.js", include_str!("../../../../sdk/typescript/src/provenance.js")),
    ("provider.js", include_str!("../../../../sdk/typescript/src/provider.js")),
    ("query.js", include_str!("../../../../sdk/typescript/src/query.js")),
    ("run.js", include_str!("../../../../sdk/typescript/src/run.js")),
    ("session.js", include_str!("../../../../sdk/typescript/src/session.js")),
    ("stdio.js", include_str!("../../../../sdk/typescript/src/stdio.js")),
    ("wire.js", include_str!("../../../../sdk/typescript/src/wire.js")),
];
