"""`Session`: the protocol logic of one connection, free of any transport.

The stdio runner reads lines, asks the session what each means
(`dispatch_line`) and either writes the immediate reply or runs the
resulting job (on a worker, when the provider declared correlation). The
HTTP server calls `handle_line`, which runs any job inline and returns the
one reply, so both transports answer every input identically.
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from typing import Any, Dict, List, Optional, Tuple

from .audit import Violation, audit_answer, complete_verdicts
from .provider import Provider, ProviderError
from .query import Query, QueryError, parse_query
from .wire import PROTOCOL_VERSION, fingerprint_dimensions, protocol_family, versions_compatible

Envelope = Dict[str, Any]

ENVELOPE_TYPES = ("handshake", "handshake_ack", "query", "frames", "verify", "verified", "shutdown", "error")

#: Longest runner-written error message, in characters: messages quote peer
#: input, and a peer must not be able to make a reply as large as its request.
MAX_MESSAGE_CHARS = 2048
MAX_LISTED_VIOLATIONS = 16
MAX_LOGGED_VIOLATIONS = 64

# What `dispatch_line` returns: one of these tags and its payload.
REPLY, RUN, IGNORE, SHUTDOWN = "reply", "run", "ignore", "shutdown"


class _Malformed(ValueError):
    """A line that is not an acceptable envelope (answered bad_request)."""


def _no_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate member in a JSON object")
    return out


def _no_constants(name: str) -> Any:
    raise ValueError("%s is not JSON" % name)


def decode(line: bytes) -> Any:
    """Strict JSON: UTF-8, no NaN/Infinity, no duplicate members."""
    text = line.decode("utf-8")
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)


def encode(envelope: Envelope) -> bytes:
    """One envelope as one line: compact JSON (every newline in a value is
    escaped) plus the terminating newline."""
    return (json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")


def bounded(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, control characters replaced, so a
    peer cannot put a terminal escape or a huge echo into a reply."""
    clean = "".join(c if c.isprintable() else "\ufffd" for c in text[: limit + 1])
    return clean if len(clean) <= limit else clean[: limit - 1] + "\u2026"


def diag(text: str) -> None:
    """One diagnostic line on stderr (never stdout: over stdio, stdout is the
    protocol channel). A closed stderr is not an error."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - nowhere left to report it
        pass


class Job:
    """Provider work a dispatched envelope calls for, validated and ready to
    run with `Session.run`."""

    __slots__ = ("reply_id", "kind", "payload")

    def __init__(self, reply_id: Optional[str], kind: str, payload: Any) -> None:
        self.reply_id = reply_id
        self.kind = kind
        self.payload = payload


class Session:
    """The protocol state and rules of one connection to one provider.

    `info()` and `capabilities()` are read once, here: what the host was told
    at the handshake is exactly what the session enforces (correlation,
    verify gating, the E1 dimension). Thread-safe: the only state, whether a
    handshake succeeded, is a flag.
    """

    def __init__(self, provider: Provider, enforce_honesty: bool = True) -> None:
        self.provider = provider
        self.info = provider.info()
        self.capabilities = provider.capabilities()
        self.enforce_honesty = enforce_honesty
        self.correlated = bool(self.capabilities.get("correlation"))
        self.verifies = bool(self.capabilities.get("verify"))
        self.handshaken = False
        self._dims = fingerprint_dimensions(self.capabilities.get("embeddings_fingerprint"))
        self._lock = threading.Lock()

    # -- entry points ---------------------------------------------------

    def handle_line(self, line: bytes) -> Optional[Envelope]:
        """The reply to one line (None when it calls for none), running any
        provider work inline."""
        tag, payload = self.dispatch_line(line)
        if tag == REPLY:
            return payload
        if tag == RUN:
            return self.run(payload)
        return None

    def dispatch_line(self, line: bytes) -> Tuple[str, Any]:
        """What one line means: (REPLY, envelope), (RUN, job), (IGNORE, None)
        or (SHUTDOWN, None). Never raises (R1)."""
        try:
            value = decode(line)
        except UnicodeDecodeError as e:
            return REPLY, self._bad_request(None, "R1: line is not valid UTF-8 (first bad byte at offset %d); send one JSON envelope object per line" % e.start)
        except (ValueError, RecursionError) as e:
            return REPLY, self._bad_request(None, "R1: line is not JSON (%s); send one JSON envelope object per line" % e)
        if not isinstance(value, dict):
            return REPLY, self._bad_request(None, "R1: line is JSON but not an object; an envelope is a JSON object")
        raw_id = value.get("id")
        id_ = raw_id if isinstance(raw_id, str) else None
        type_ = value.get("type")
        if not isinstance(type_, str):
            return REPLY, self._bad_request(self._reply_id(id_), "R1: object has no string \"type\" member (expected one of %s)" % ", ".join(ENVELOPE_TYPES))
        try:
            return self._dispatch(type_, value, id_)
        except _Malformed as e:
            return REPLY, self._bad_request(self._reply_id(id_), "R1: malformed %s envelope: %s" % (type_, e))

    def run(self, job: Job) -> Envelope:
        """Run provider work and build its reply. Never raises: an exception
        in the provider's code is answered `internal` and logged."""
        if job.kind == "query":
            return self._run_query(job.reply_id, job.payload)
        return self._run_verify(job.payload)

    # -- dispatch -------------------------------------------------------

    def _dispatch(self, type_: str, value: Dict[str, Any], id_: Optional[str]) -> Tuple[str, Any]:
        if "id" in value and value["id"] is not None and id_ is None and type_ in ("query",):
            raise _Malformed("id must be a string")
        if type_ == "handshake":
            version = value.get("protocol_version")
            if not isinstance(version, str):
                raise _Malformed("protocol_version must be a string")
            return REPLY, self._handshake(version)
        if type_ == "query":
            reply_id = self._reply_id(id_)
            if not self.handshaken:
                return REPLY, self._handshake_first(reply_id, "query")
            try:
                query = parse_query(value.get("query"))
            except QueryError as e:
                return REPLY, self._bad_request(reply_id, "invalid query: %s" % e)
            problem = self._embedding_problem(query)
            if problem:
                return REPLY, self._bad_request(reply_id, "invalid query: %s" % problem)
            return RUN, Job(reply_id, "query", query)
        if type_ == "verify":
            request = value.get("request")
            identities = request.get("frames") if isinstance(request, dict) else None
            if not isinstance(identities, list) or not all(_is_identity(i) for i in identities):
                raise _Malformed("request.frames must be an array of {provider_id, frame_id, content_digest?} objects")
            if not self.handshaken:
                return REPLY, self._handshake_first(None, "verify")
            if not self.verifies:
                return REPLY, self._bad_request(None, "V2: this provider does not verify (capabilities.verify is false); re-query instead")
            frames = [
                {k: i[k] for k in ("provider_id", "frame_id", "content_digest") if i.get(k) is not None}
                for i in identities
            ]
            return RUN, Job(None, "verify", frames)
        if type_ == "shutdown":
            return SHUTDOWN, None
        if type_ == "error":
            return IGNORE, None
        if type_ in ENVELOPE_TYPES:
            return REPLY, self._bad_request(
                self._reply_id(id_),
                "%s is sent by a provider to a host, not to a provider; send handshake, query, verify or shutdown" % type_,
            )
        if id_ is not None:
            return REPLY, self._bad_request(
                self._reply_id(id_),
                "unknown envelope type %r; this provider serves handshake, query, verify and shutdown" % bounded(type_, 64),
            )
        # An unknown notification (no id) is ignored (U1, U2).
        return IGNORE, None

    def _handshake(self, host_version: str) -> Envelope:
        if versions_compatible(host_version, PROTOCOL_VERSION):
            with self._lock:
                self.handshaken = True
            return {
                "type": "handshake_ack",
                "protocol_version": PROTOCOL_VERSION,
                "provider": self.info,
                "capabilities": self.capabilities,
            }
        ours = protocol_family(PROTOCOL_VERSION)
        family = protocol_family(host_version)
        theirs = (
            "the host speaks family %s (%s)" % (family, bounded(host_version, 64))
            if family
            else "the host's version %r is not a protocol version (contextgraph/<major>.<minor>[-draft]) and so belongs to no family" % bounded(host_version, 64)
        )
        return self._error(
            None,
            "incompatible_version",
            "H3: %s, but this provider speaks family %s (%s); handshake again with a %s.x version or use another provider"
            % (theirs, ours, PROTOCOL_VERSION, ours),
        )

    def _embedding_problem(self, query: Query) -> Optional[str]:
        if query.embedding is None:
            return None
        if self._dims is None:
            return "E1: this provider declared no embedding space; it cannot accept a query vector"
        if len(query.embedding) != self._dims:
            return "E1: embedding has %d dimensions but this provider's space has %d" % (len(query.embedding), self._dims)
        return None

    # -- running --------------------------------------------------------

    def _run_query(self, reply_id: Optional[str], query: Query) -> Envelope:
        try:
            result = self.provider.query(query)
        except ProviderError as e:
            message = e.message if isinstance(e.message, str) and e.message.strip() else "the provider failed with %s and gave no message" % e.code
            return self._error(reply_id, e.code if isinstance(e.code, str) and e.code else "internal", message, prefix=False)
        except Exception as e:  # noqa: BLE001 - R1: a provider bug is an answer, not a crash
            return self._crashed(reply_id, "query", e)
        if self.enforce_honesty:
            violations = audit_answer(query, result)
            if violations:
                return self._dishonest(reply_id, "frames", violations)
        envelope: Envelope = {"type": "frames"}
        if reply_id is not None:
            envelope["id"] = reply_id
        envelope["result"] = result
        return envelope

    def _run_verify(self, identities: List[Dict[str, Any]]) -> Envelope:
        try:
            verdicts = self.provider.verify(identities)
        except Exception as e:  # noqa: BLE001
            return self._crashed(None, "verify", e)
        return {"type": "verified", "response": {"verdicts": complete_verdicts(identities, verdicts)}}

    def _crashed(self, reply_id: Optional[str], what: str, e: BaseException) -> Envelope:
        diag("%s: %s handler raised:\n%s" % (self.info.get("name"), what, "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()))
        return self._error(
            reply_id,
            "internal",
            "the %s handler raised %s (%s); this is a provider bug, report it to the provider's author" % (what, type(e).__name__, bounded(str(e), 256)),
        )

    def _dishonest(self, reply_id: Optional[str], what: str, violations: List[Violation]) -> Envelope:
        diag("%s: honesty guard withheld %s breaking %d rule(s):" % (self.info.get("name"), what, len(violations)))
        for v in violations[:MAX_LOGGED_VIOLATIONS]:
            diag("  %s" % v)
        listed = ", ".join("%s at %s" % (v.anchor, v.path) for v in violations[:MAX_LISTED_VIOLATIONS])
        if len(violations) > MAX_LISTED_VIOLATIONS:
            listed += " and %d more" % (len(violations) - MAX_LISTED_VIOLATIONS)
        return self._error(
            reply_id,
            "internal",
            "honesty guard withheld dishonest %s (%s); this is a provider bug, see the provider's stderr for details" % (what, listed),
        )

    # -- helpers --------------------------------------------------------

    def _reply_id(self, id_: Optional[str]) -> Optional[str]:
        """H4: echo the request id only when correlation was declared."""
        return id_ if self.correlated else None

    def _handshake_first(self, reply_id: Optional[str], what: str) -> Envelope:
        return self._bad_request(reply_id, "%s before the handshake: handshake first (no query payload moves before a handshake_ack)" % what)

    def _bad_request(self, reply_id: Optional[str], message: str) -> Envelope:
        return self._error(reply_id, "bad_request", message)

    def _error(self, reply_id: Optional[str], code: str, message: str, prefix: bool = True) -> Envelope:
        text = "%s: %s" % (self.info.get("name"), message) if prefix else message
        envelope: Envelope = {"type": "error"}
        if reply_id is not None:
            envelope["id"] = reply_id
        envelope["code"] = code
        envelope["message"] = bounded(text, MAX_MESSAGE_CHARS)
        return envelope

    def encode_reply(self, envelope: Envelope) -> bytes:
        """`encode`, falling back to an `internal` error when the provider put
        something into its answer that is not JSON (a set, a NaN, a lone
        surrogate)."""
        try:
            return encode(envelope)
        except (TypeError, ValueError) as e:
            diag("%s: the reply could not be encoded as JSON: %s" % (self.info.get("name"), e))
            return encode(
                self._error(
                    envelope.get("id") if isinstance(envelope.get("id"), str) else None,
                    "internal",
                    "the reply could not be encoded as JSON (%s); this is a provider bug" % bounded(str(e), 256),
                )
            )


def _is_identity(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("provider_id"), str)
        and isinstance(value.get("frame_id"), str)
        and (value.get("content_digest") is None or isinstance(value.get("content_digest"), str))
    )
