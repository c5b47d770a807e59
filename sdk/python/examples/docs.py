"""A docs-folder provider: every Markdown section of a folder is a `doc`
frame with file provenance (the section's exact lines and their digest),
dated by the file's modification time, and verifiable by digest.

    python3 docs.py [FOLDER] [--http 127.0.0.1:8700]
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from contextgraph_provider import (  # noqa: E402
    Provider, file_excerpt, format_timestamp, pack, run, verdict_by_digest,
)

WORD = re.compile(r"[a-z0-9]+")


def words(text):
    return set(WORD.findall(text.lower()))


class Docs(Provider):
    name = "docs-example"
    version = "0.1.0"
    kinds = ["doc"]

    def __init__(self, root):
        self.root = os.path.realpath(root)

    def sections(self, rel):
        """The frames of one file as it is on disk now, by frame id."""
        path = os.path.join(self.root, rel)
        with open(path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        starts = [i + 1 for i, line in enumerate(lines) if line.startswith(b"#")] or [1]
        count = len(lines) - (1 if data.endswith(b"\n") else 0)
        out = {}
        for n, start in enumerate(starts):
            end = (starts[n + 1] - 1) if n + 1 < len(starts) else count
            if start < 1 or end < start:
                continue
            excerpt = file_excerpt(path, data, start, end, method="file-read", by=self.name)
            title = excerpt.text().splitlines()[0].lstrip("#").strip() or rel
            frame_id = "%s#%d" % (rel, n)
            out[frame_id] = excerpt.frame(frame_id, "doc", title,
                                          recorded_at=format_timestamp(os.stat(path).st_mtime))
        return out

    def files(self):
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                if name.endswith(".md"):
                    yield os.path.relpath(os.path.join(folder, name), self.root)

    def query(self, query):
        wanted = words(query.match_text)
        candidates = []
        for rel in self.files():
            for f in self.sections(rel).values():
                hits = len(wanted & words(f["title"] + " " + f["content"]))
                if hits:
                    candidates.append(dict(f, score=hits / len(wanted)))
        return pack(candidates, query)

    def verify(self, identities):
        out = []
        for identity in identities:
            rel = identity["frame_id"].rpartition("#")[0]
            inside = os.path.realpath(os.path.join(self.root, rel)).startswith(self.root + os.sep)
            try:
                current = self.sections(rel).get(identity["frame_id"]) if inside and rel.endswith(".md") else None
            except OSError:
                current = None
            digest = current["content_digest"] if current else None
            out.append(verdict_by_digest(identity, digest, served=current is not None))
        return out


if __name__ == "__main__":
    args = sys.argv[1:]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample-docs")
    if args and not args[0].startswith("--"):
        root = args.pop(0)
    sys.exit(run(Docs(root), args))
