"""A key-value "facts" provider: each fact has a value per period, and a
query pinned with `as_of` gets the value that held then (never a later one).

    python3 facts.py [FACTS.json] [--http 127.0.0.1:8700]
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from contextgraph_provider import (  # noqa: E402
    Provider, frame, pack, parse_timestamp, run, verdict_by_digest,
)

WORD = re.compile(r"[a-z0-9]+")


def words(text):
    return set(WORD.findall(text.lower()))


class Facts(Provider):
    name = "facts-example"
    version = "0.1.0"
    kinds = ["fact"]

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)
        # Per key, its versions oldest first; a version is valid until the next.
        by_key = {}
        for row in sorted(rows, key=lambda r: parse_timestamp(r["valid_from"])):
            by_key.setdefault(row["key"], []).append(row)
        self.frames = {}  # frame id -> (frame, key words)
        for key, versions in by_key.items():
            for i, row in enumerate(versions):
                later = versions[i + 1]["valid_from"] if i + 1 < len(versions) else None
                text = "%s = %s" % (key, row["value"])
                f = frame("%s@%s" % (key, row["valid_from"]), "fact", key, text,
                          valid_from=row["valid_from"], valid_to=later,
                          citation_label="%s (from %s)" % (key, row["valid_from"]))
                self.frames[f["id"]] = (f, words(text + " " + row.get("note", "")))

    def query(self, query):
        wanted = words(query.match_text)
        pin = query.as_of_instant
        candidates = []
        for f, terms in self.frames.values():
            hits = len(wanted & terms)
            if not hits:
                continue
            # The version in force at the pin (or now): started, not yet ended.
            if pin is not None and parse_timestamp(f["valid_from"]) > pin:
                continue
            end = f.get("valid_to")
            if end is not None and (pin is None or parse_timestamp(end) <= pin):
                continue
            candidates.append(dict(f, score=hits / len(wanted)))
        return pack(candidates, query)

    def verify(self, identities):
        out = []
        for identity in identities:
            held = self.frames.get(identity["frame_id"])
            current = held[0]["content_digest"] if held else None
            out.append(verdict_by_digest(identity, current, served=held is not None))
        return out


if __name__ == "__main__":
    args = sys.argv[1:]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "facts.json")
    if args and not args[0].startswith("--"):
        path = args.pop(0)
    sys.exit(run(Facts(path), args))
