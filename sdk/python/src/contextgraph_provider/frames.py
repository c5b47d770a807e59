"""Frames whose cost and digest cannot lie.

A host audits every answer and drops *all* of a provider's frames when a
declared `token_cost` (B3) or `content_digest` (D1) does not match the
content (B2). `frame()` therefore never lets an author type those two
numbers: it computes them from the content it puts in the frame.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Mapping, Optional

from .wire import content_digest, token_cost

Frame = Dict[str, Any]
"""A frame as its wire object (a JSON object as a dict)."""


def clamp_score(score: float) -> float:
    """F1: `score` clamped into [0, 1]; NaN (and anything not a number) is 0."""
    try:
        value = float(score)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))


def frame(
    id: str,
    kind: str,
    title: str,
    content: str,
    *,
    score: float = 0.5,
    uri: Optional[str] = None,
    citation_label: Optional[str] = None,
    recorded_at: Optional[str] = None,
    valid_from: Optional[str] = None,
    valid_to: Optional[str] = None,
    provenance: Iterable[Mapping[str, Any]] = (),
    relations: Iterable[Mapping[str, Any]] = (),
    content_fidelity: Optional[str] = None,
) -> Frame:
    """A `full` frame carrying `content` inline.

    What it does for you:
    - `token_cost` = ceil(utf8_bytes(content) / 4) (B3) and `content_digest`
      = SHA-256 of exactly the content bytes (D1), computed here;
    - `score` clamped into [0, 1], NaN becomes 0 (F1);
    - `citation_label` defaults to the title (F3: hosts cite by label);
    - empty optional members are omitted, as the wire wants.

    Timestamps (`recorded_at`, `valid_from`, `valid_to`) must be F4 strings
    (`wire.format_timestamp` makes one); the runner's honesty guard refuses
    an answer carrying a malformed one.
    """
    if not isinstance(content, str):
        raise TypeError("frame content must be a str (the exact text sent inline)")
    out: Frame = {
        "id": id,
        "kind": kind,
        "title": title,
        "score": clamp_score(score),
        "token_cost": token_cost(content),
        "content": content,
        "content_digest": content_digest(content),
    }
    label = citation_label if citation_label and citation_label.strip() else title
    if label and label.strip():
        out["citation_label"] = label
    if uri:
        out["uri"] = uri
    for key, value in (
        ("recorded_at", recorded_at),
        ("valid_from", valid_from),
        ("valid_to", valid_to),
        ("content_fidelity", content_fidelity),
    ):
        if value is not None:
            out[key] = value
    prov: List[Dict[str, Any]] = [dict(p) for p in provenance]
    if prov:
        out["provenance"] = prov
    rels: List[Dict[str, Any]] = [dict(r) for r in relations]
    if rels:
        out["relations"] = rels
    return out


def relation(rel: str, target_uri: str, display_name: str) -> Dict[str, str]:
    """A graph edge (G1 wants a non-empty `display_name`, G2 a non-empty
    `target_uri`)."""
    return {"rel": rel, "target_uri": target_uri, "display_name": display_name}
