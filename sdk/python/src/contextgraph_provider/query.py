"""The query a provider is asked, parsed and checked before it sees it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, List, Mapping, Optional, Tuple

from .wire import U32_MAX, parse_timestamp


class QueryError(ValueError):
    """A query that cannot be served as sent (answered `bad_request`)."""


@dataclass(frozen=True)
class Query:
    """A request for frames relevant to `goal`, under a hard budget.

    Unknown members of the wire object are ignored (U1); `null` for an
    optional member means absent."""

    goal: str
    max_frames: int
    """B4: most frames the answer may carry."""
    max_tokens: int
    """B1: most budget tokens the answer may cost."""
    query_text: Optional[str] = None
    embedding: Optional[List[float]] = None
    kinds: Tuple[str, ...] = ()
    """Q1: kinds wanted; empty means any kind."""
    anchors: Tuple[str, ...] = ()
    """G3/G4: URIs the host considers focal."""
    as_of: Optional[str] = None
    """Pin retrieval to an instant (F4): nothing dated after it."""
    representation_preferences: Tuple[str, ...] = ()
    as_of_instant: Optional[Tuple[int, int]] = field(default=None, compare=False, repr=False)

    @property
    def match_text(self) -> str:
        """The text to match: `query_text` when given and non-blank, else `goal`."""
        if self.query_text is not None and self.query_text.strip():
            return self.query_text
        return self.goal

    def accepts_kind(self, kind: str) -> bool:
        """Q1: whether a frame of `kind` may be returned for this query."""
        return not self.kinds or kind in self.kinds

    def to_wire(self) -> dict:
        """The wire object (optional members omitted when empty)."""
        out: dict = {"goal": self.goal, "max_frames": self.max_frames, "max_tokens": self.max_tokens}
        for key in ("query_text", "embedding", "as_of"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        for key in ("kinds", "anchors", "representation_preferences"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        return out


def _u32(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    if value is None:
        raise QueryError("query.%s is missing; it is required (a u32)" % key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U32_MAX:
        raise QueryError("query.%s must be an integer from 0 to 4294967295" % key)
    return value


def _strings(obj: Mapping[str, Any], key: str) -> Tuple[str, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise QueryError("query.%s must be an array of strings" % key)
    return tuple(value)


def _opt_str(obj: Mapping[str, Any], key: str) -> Optional[str]:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise QueryError("query.%s must be a string" % key)
    return value


def parse_query(obj: Any) -> Query:
    """The `query` member of a `query` envelope as a `Query`, or QueryError
    naming what is wrong: missing or mistyped members, an empty goal, an
    `as_of` that is not an F4 timestamp, a non-finite embedding value."""
    if not isinstance(obj, dict):
        raise QueryError("query must be a JSON object")
    goal = obj.get("goal")
    if not isinstance(goal, str):
        raise QueryError("query.goal must be a string")
    if not goal.strip():
        raise QueryError("query.goal is empty")
    max_frames = _u32(obj, "max_frames")
    max_tokens = _u32(obj, "max_tokens")
    as_of = _opt_str(obj, "as_of")
    instant = None
    if as_of is not None:
        instant = parse_timestamp(as_of)
        if instant is None:
            raise QueryError(
                "F4: query.as_of %r is not a protocol timestamp (YYYY-MM-DDTHH:MM:SS[.fraction]Z, UTC, a real date)"
                % as_of[:64]
            )
    embedding = obj.get("embedding")
    if embedding is not None:
        if not isinstance(embedding, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in embedding
        ):
            raise QueryError("query.embedding must be an array of numbers")
        if not all(math.isfinite(x) for x in embedding):
            raise QueryError("E1: query.embedding values must be finite numbers")
        embedding = [float(x) for x in embedding]
    return Query(
        goal=goal,
        max_frames=max_frames,
        max_tokens=max_tokens,
        query_text=_opt_str(obj, "query_text"),
        embedding=embedding,
        kinds=_strings(obj, "kinds"),
        anchors=_strings(obj, "anchors"),
        as_of=as_of,
        representation_preferences=_strings(obj, "representation_preferences"),
        as_of_instant=instant,
    )
