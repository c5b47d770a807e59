"""Packing candidates into an honest answer: the kinds filter (Q1), the
`as_of` pin, a deterministic ranking, and greedy budget packing (B1, B4)
with a truthful `truncated` / `dropped_estimate`.

Each step is a public function too, so a provider that ranks its own way can
still reuse the filters, and one that filters in its store can still reuse
the packing.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List

from .frames import Frame
from .query import Query
from .wire import U32_MAX, parse_timestamp

Result = Dict[str, Any]
"""A `ContextQueryResult` wire object: frames, truncated, dropped_estimate."""


def filter_kinds(candidates: Iterable[Frame], query: Query) -> List[Frame]:
    """Q1: only the frames whose kind the query accepts (all when it names
    no kinds)."""
    if not query.kinds:
        return list(candidates)
    return [f for f in candidates if f.get("kind") in query.kinds]


def filter_as_of(candidates: Iterable[Frame], query: Query) -> List[Frame]:
    """`as_of`: drop every frame whose `recorded_at` or `valid_from` is after
    the query's pinned instant, compared as instants. When the query is
    pinned, a frame whose date does not parse is dropped too: nothing shows
    it is not from the future."""
    pin = query.as_of_instant
    if pin is None and query.as_of is not None:
        pin = parse_timestamp(query.as_of)
    if pin is None:
        return list(candidates)

    def not_after(value: Any) -> bool:
        if value is None:
            return True
        t = parse_timestamp(value)
        return t is not None and t <= pin

    return [f for f in candidates if not_after(f.get("recorded_at")) and not_after(f.get("valid_from"))]


def _rank_key(f: Frame) -> Any:
    score = f.get("score")
    if not isinstance(score, (int, float)) or math.isnan(score):
        score = -math.inf
    digest = f.get("content_digest")
    return (-score, str(f.get("id", "")), digest is not None, digest or "")


def rank(frames: List[Frame]) -> List[Frame]:
    """The packing order, in place and returned: score descending (NaN last),
    then frame id, then content digest (absent first). Total and independent
    of input order, so the same candidates always pack to the same answer."""
    frames.sort(key=_rank_key)
    return frames


def pack(candidates: Iterable[Frame], query: Query, *, ranked: bool = False) -> Result:
    """The answer to `query` from `candidates`:

    1. `filter_kinds` and `filter_as_of`: frames failing them are not
       eligible and are not counted as dropped;
    2. `rank` (unless `ranked=True`: the candidates are already in the
       order the provider wants, which is the order the answer keeps);
    3. greedy packing: take each frame whose `token_cost` fits what is left
       of `max_tokens` (B1), skipping one that does not and continuing with
       smaller ones, until `max_frames` (B4) are taken;
    4. `truncated` is true exactly when an eligible candidate was left out,
       and `dropped_estimate` says how many (omitted when none).

    Costs are taken as the frames declare them, so build candidates with
    `frame()`, whose costs are computed (B3).
    """
    eligible = filter_as_of(filter_kinds(candidates, query), query)
    if not ranked:
        rank(eligible)
    remaining = query.max_tokens
    frames: List[Frame] = []
    dropped = 0
    for f in eligible:
        cost = f.get("token_cost", 0)
        if len(frames) < query.max_frames and isinstance(cost, int) and cost <= remaining:
            remaining -= cost
            frames.append(f)
        else:
            dropped += 1
    result: Result = {"frames": frames, "truncated": dropped > 0}
    if dropped:
        result["dropped_estimate"] = min(dropped, U32_MAX)
    return result
