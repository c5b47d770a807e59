"""The honesty checks the runner applies before anything leaves the
provider, as plain functions a provider can also call in its own tests.

A host audits every answer and quarantines a provider whose frames break
budget honesty (B1, B3, B4), digests (D1, F5) or frame validity (F1-F4),
dropping *all* of that answer's frames (B2). Catching the same faults on
the provider side turns a silent quarantine into a named `internal` error
the author sees on the first run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

from .query import Query
from .wire import KINDS, U32_MAX, content_digest, is_sha256_digest, parse_range, parse_timestamp, token_cost


@dataclass(frozen=True)
class Violation:
    """One broken rule: its requirement anchor, where, and what is wrong."""

    anchor: str
    path: str
    message: str

    def __str__(self) -> str:
        return "%s at %s: %s" % (self.anchor, self.path, self.message)


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def audit_frame(f: Any, path: str = "") -> List[Violation]:
    """Every rule a frame can be checked on alone (F1-F5, B3, D1 recomputed,
    P1, G1-G2, U2, shape), paths under `path`."""
    out: List[Violation] = []

    def bad(anchor: str, field: str, message: str) -> None:
        out.append(Violation(anchor, (path + "." + field) if path else field, message))

    if not isinstance(f, dict):
        bad("shape", "", "a frame must be a JSON object")
        return out
    if not isinstance(f.get("id"), str) or not f.get("id"):
        bad("shape", "id", "frame id must be a non-empty string")
    kind = f.get("kind")
    if kind not in KINDS:
        bad("U2", "kind", "kind %r is not one of %s" % (kind, ", ".join(KINDS)))
    score = f.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score) or not 0 <= score <= 1:
        bad("F1", "score", "score %r is not a number in [0, 1]" % (score,))
    if _blank(f.get("title")):
        bad("F2", "title", "title is empty; every frame needs a human label")
    if _blank(f.get("citation_label")):
        bad("F3", "citation_label", "citation_label is missing or empty; hosts cite frames by label")
    content = f.get("content")
    if content is not None and not isinstance(content, str):
        bad("shape", "content", "content must be a string")
        content = None
    rep = f.get("representation", "full")
    if rep != "full":
        bad("P5", "representation", "this SDK builds full frames only; %r needs resolve, which 1.0 has no operation for" % (rep,))
    else:
        if content is None:
            bad("P1", "content", "a full frame must carry content")
        for member in ("content_ref", "transform", "canonical_content_hash"):
            if f.get(member) is not None:
                bad("P1", member, "a full frame must not carry %s" % member)
    expected = token_cost(content)
    declared = f.get("token_cost")
    if isinstance(declared, bool) or not isinstance(declared, int) or declared != expected:
        n = len(content.encode("utf-8")) if content is not None else 0
        bad("B3", "token_cost", "token_cost %r does not match the content: %d bytes cost ceil(%d/4) = %d" % (declared, n, n, expected))
    digest = f.get("content_digest")
    if digest is not None:
        if not is_sha256_digest(digest):
            bad("D1", "content_digest", "content_digest %r is not sha256: followed by 64 lowercase hex digits" % (digest,))
        elif content is not None and content_digest(content) != digest:
            bad("D1", "content_digest", "content_digest %s is not the digest of the content (%s)" % (digest, content_digest(content)))
    stamps = {}
    for member in ("valid_from", "valid_to", "recorded_at"):
        value = f.get(member)
        if value is not None:
            stamps[member] = parse_timestamp(value)
            if stamps[member] is None:
                bad("F4", member, "%s %r is not a protocol timestamp (YYYY-MM-DDTHH:MM:SS[.f]Z)" % (member, value))
    if stamps.get("valid_from") and stamps.get("valid_to") and stamps["valid_from"] > stamps["valid_to"]:
        bad("F4", "valid_to", "valid_to is earlier than valid_from")
    provenance = f.get("provenance", [])
    if not isinstance(provenance, list):
        bad("shape", "provenance", "provenance must be an array")
        provenance = []
    for i, p in enumerate(provenance):
        at = "provenance[%d]" % i
        if not isinstance(p, dict) or _blank(p.get("type")):
            bad("shape", at + ".type", "provenance entry must be an object with a type")
            continue
        if p.get("digest") is not None and not is_sha256_digest(p.get("digest")):
            bad("F5", at + ".digest", "digest %r is not sha256: followed by 64 lowercase hex digits" % (p.get("digest"),))
        if p.get("type") != "file":
            continue
        if _blank(p.get("uri")):
            bad("F5", at + ".uri", "file provenance must name the file it read (uri)")
        if p.get("digest") is None:
            bad("F5", at + ".digest", "file provenance must carry the sha256 digest of the bytes it addresses")
        if p.get("range") is not None and parse_range(p.get("range")) is None:
            bad("F5", at + ".range", "range %r is not L<start>-<end> with 1 <= start <= end" % (p.get("range"),))
    relations = f.get("relations", [])
    if not isinstance(relations, list):
        bad("shape", "relations", "relations must be an array")
        relations = []
    for i, r in enumerate(relations):
        at = "relations[%d]" % i
        if not isinstance(r, dict) or not isinstance(r.get("rel"), str) or not r.get("rel"):
            bad("shape", at + ".rel", "relation name is empty")
            continue
        if _blank(r.get("target_uri")):
            bad("G2", at + ".target_uri", "relation target_uri is empty")
        if _blank(r.get("display_name")):
            bad("G1", at + ".display_name", "relation has no display_name; edges are shown by human label")
    return out


def audit_answer(query: Query, result: Any) -> List[Violation]:
    """Every reason `result` may not be sent as the answer to `query`: each
    frame's own rules (paths `frames[i]...`), plus B1, B4, Q1, `as_of`, the
    `truncated` flag and duplicate ids (D2)."""
    out: List[Violation] = []
    if not isinstance(result, dict) or not isinstance(result.get("frames"), list):
        return [Violation("shape", "frames", "an answer must be an object with a frames array (use pack())")]
    frames = result["frames"]
    if not isinstance(result.get("truncated"), bool):
        out.append(Violation("shape", "truncated", "truncated is required and must be a boolean"))
    dropped = result.get("dropped_estimate")
    if dropped is not None and (isinstance(dropped, bool) or not isinstance(dropped, int) or not 0 <= dropped <= U32_MAX):
        out.append(Violation("shape", "dropped_estimate", "dropped_estimate must be an integer from 0 to 4294967295"))
    elif dropped and result.get("truncated") is False:
        out.append(Violation("truncated", "dropped_estimate", "dropped_estimate is positive but truncated is false"))
    total = sum(f.get("token_cost", 0) for f in frames if isinstance(f, dict) and isinstance(f.get("token_cost"), int))
    if total > query.max_tokens:
        out.append(Violation("B1", "frames", "frames cost %d tokens in total, over the budget of %d" % (total, query.max_tokens)))
    if len(frames) > query.max_frames:
        out.append(Violation("B4", "frames", "%d frames returned, over max_frames %d" % (len(frames), query.max_frames)))
    seen: Dict[Any, int] = {}
    pin = query.as_of_instant if query.as_of_instant is not None else parse_timestamp(query.as_of)
    for i, f in enumerate(frames):
        at = "frames[%d]" % i
        out.extend(audit_frame(f, at))
        if not isinstance(f, dict):
            continue
        fid = f.get("id")
        if isinstance(fid, str) and fid:
            if fid in seen:
                out.append(Violation("D2", at + ".id", "frame id %r appears more than once (also frames[%d])" % (fid, seen[fid])))
            else:
                seen[fid] = i
        if query.kinds and f.get("kind") not in query.kinds:
            out.append(Violation("Q1", at + ".kind", "kind %r was not requested (kinds filter: %s)" % (f.get("kind"), ", ".join(query.kinds))))
        if pin is not None:
            for member in ("recorded_at", "valid_from"):
                t = parse_timestamp(f.get(member))
                if t is not None and t > pin:
                    out.append(Violation("as_of", at + "." + member, "%s %s is after the query's as_of %s" % (member, f.get(member), query.as_of)))
    return out


def complete_verdicts(request_frames: List[Mapping[str, Any]], verdicts: Any) -> List[Dict[str, Any]]:
    """V2: exactly one verdict per distinct requested identity, in request
    order. An identity the provider did not answer gets `unknown` (silence is
    never validity); a verdict for an identity not asked is dropped, as is
    every verdict after the first for the same identity. A verdict whose
    status is not one of the four, or whose `replacement_digest` is not a
    digest (V4), is replaced by `unknown`."""

    def key(identity: Mapping[str, Any]) -> Any:
        return (identity.get("provider_id"), identity.get("frame_id"), identity.get("content_digest"))

    answered: Dict[Any, Dict[str, Any]] = {}
    for v in verdicts if isinstance(verdicts, list) else []:
        if not isinstance(v, dict) or not isinstance(v.get("frame"), dict):
            continue
        status = v.get("status")
        if status not in ("valid", "stale", "gone", "unknown"):
            continue
        replacement = v.get("replacement_digest")
        if status == "stale" and replacement is not None and not is_sha256_digest(replacement):
            continue
        answered.setdefault(key(v["frame"]), v)
    out: List[Dict[str, Any]] = []
    done = set()
    for identity in request_frames:
        k = key(identity)
        if k in done:
            continue
        done.add(k)
        given = answered.get(k)
        verdict: Dict[str, Any] = {"frame": dict(identity), "status": given["status"] if given else "unknown"}
        if given and given["status"] == "stale" and given.get("replacement_digest") is not None:
            verdict["replacement_digest"] = given["replacement_digest"]
        out.append(verdict)
    return out


def verdict_by_digest(identity: Mapping[str, Any], current: Optional[str], served: bool = True) -> Dict[str, Any]:
    """The honest verdict for one identity, given the digest the provider
    serves *now* for its `frame_id` (`current`, None when it cannot tell)
    and whether it still serves that frame at all (`served`):

    - not served any more: `gone`;
    - served, presented digest equals the current one: `valid` (V2: the only
      case that may say valid);
    - served with another digest: `stale`, with the current digest as
      `replacement_digest` (V4: a digest, never a body);
    - no digest presented, or the current one unknown: `unknown`.

    `provider_id` is the host's label for this provider, echoed back
    unchanged; it is not compared (a host may name a provider as it likes).
    """
    verdict: Dict[str, Any] = {"frame": dict(identity)}
    held = identity.get("content_digest")
    if not served:
        verdict["status"] = "gone"
    elif current is None or held is None:
        verdict["status"] = "unknown"
    elif held == current:
        verdict["status"] = "valid"
    else:
        verdict["status"] = "stale"
        verdict["replacement_digest"] = current
    return verdict
