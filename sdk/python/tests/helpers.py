"""Shared test doubles."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from contextgraph_provider import Provider, frame, pack  # noqa: E402

HANDSHAKE = b'{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}'


def query_line(id_=None, **query):
    import json

    body = {"goal": "retry policy", "max_frames": 5, "max_tokens": 1000}
    body.update(query)
    env = {"type": "query", "query": body}
    if id_ is not None:
        env["id"] = id_
    return json.dumps(env).encode()


class Fixed(Provider):
    """Answers every query with the same frames, packed."""

    name = "fixed"
    version = "1"
    kinds = ["doc", "fact"]

    def __init__(self, frames=None, correlation=True):
        self.correlation = correlation
        self.frames = frames if frames is not None else [
            frame("a", "doc", "A", "alpha " * 10, score=0.9, recorded_at="2026-01-01T00:00:00Z"),
            frame("b", "fact", "B", "beta", score=0.5, valid_from="2026-02-01T00:00:00.5Z"),
            frame("c", "doc", "C", "gamma " * 40, score=0.7),
        ]

    def query(self, query):
        return pack(self.frames, query)
