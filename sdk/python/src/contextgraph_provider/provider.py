"""What a provider author implements: a `Provider` subclass, and the
`ProviderError` it raises instead of answering with frames."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from .pack import Result
from .query import Query


class ProviderError(Exception):
    """A failure reported instead of frames: a `code` for the machine and a
    `message` for a person (sent as an `error` envelope)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message

    @classmethod
    def bad_request(cls, message: str) -> "ProviderError":
        """`bad_request`: malformed or unintelligible request (never retried)."""
        return cls("bad_request", message)

    @classmethod
    def unsupported_kind(cls, message: str) -> "ProviderError":
        """`unsupported_kind`: none of the requested kinds is served (Q1)."""
        return cls("unsupported_kind", message)

    @classmethod
    def budget_unsatisfiable(cls, message: str) -> "ProviderError":
        """`budget_unsatisfiable`: not even the smallest candidate fits."""
        return cls("budget_unsatisfiable", message)

    @classmethod
    def unavailable(cls, message: str) -> "ProviderError":
        """`unavailable`: transient; the host retries with backoff."""
        return cls("unavailable", message)

    @classmethod
    def internal(cls, message: str) -> "ProviderError":
        """`internal`: a provider fault."""
        return cls("internal", message)


class Provider:
    """Subclass this: set the identity and capability attributes, implement
    `query`, and optionally `verify`. Everything protocol-shaped (handshake,
    correlation, malformed input, shutdown, the honesty guard) is the
    runner's job (`serve_stdio`, `serve_http`).

    With `correlation = True` (the default) the runner calls `query` from
    several threads at once (up to `max_workers`), so keep it thread-safe
    (read-only state is); set it False to be served strictly one request at
    a time.
    """

    name: str = ""
    """Provider name; hosts key frames and consent on it (H2: non-empty)."""
    version: str = ""
    """Provider version (H2: non-empty)."""
    reads: bool = True
    """It sees workspace content in queries."""
    writes: bool = False
    """It durably keeps something derived from what it is sent."""
    egress: bool = False
    """It sends anything off the machine (C1: hosts gate it behind consent)."""
    egress_scopes: Sequence[str] = ()
    """Where data may go: `local-only`, `org-tenant`, ... (C5: off-machine
    scopes need `egress = True`)."""
    kinds: Sequence[str] = ()
    """The frame kinds served (Q1)."""
    correlation: bool = True
    """Serve several queries in flight, replies echoing their ids (H4)."""
    graph: bool = False
    """Frames near the query's anchors rank first (G3, G4)."""
    embeddings_fingerprint: Optional[str] = None
    """`<model>/<dimensions>[/<normalization>]` when queries may carry a
    vector (E1); None means a vector is refused."""

    def info(self) -> Dict[str, Any]:
        """Identity and data flow, sent in the `handshake_ack`."""
        flow: Dict[str, Any] = {"reads": bool(self.reads), "writes": bool(self.writes), "egress": bool(self.egress)}
        if self.egress_scopes:
            flow["egress_scopes"] = list(self.egress_scopes)
        return {"name": self.name, "version": self.version, "data_flow": flow}

    def declares_verify(self) -> bool:
        """Whether this provider overrides `verify` (then `capabilities.verify`)."""
        return type(self).verify is not Provider.verify

    def capabilities(self) -> Dict[str, Any]:
        """Capabilities, sent in the `handshake_ack`."""
        caps: Dict[str, Any] = {
            "query": {"kinds": list(self.kinds)},
            "correlation": bool(self.correlation),
            "graph": bool(self.graph),
            "verify": self.declares_verify(),
        }
        if self.embeddings_fingerprint is not None:
            caps["embeddings_fingerprint"] = self.embeddings_fingerprint
        return caps

    def query(self, query: Query) -> Result:
        """Answer a query: build frames with `frame()` / `file_excerpt()` so
        costs, digests and provenance are honest by construction, and return
        `pack(candidates, query)` so the budget is honoured and `truncated`
        is true exactly when something was left out."""
        raise NotImplementedError("implement Provider.query")

    def verify(self, identities: List[Mapping[str, Any]]) -> List[Dict[str, Any]]:
        """Revalidate held frames: one verdict per identity (`verdict_by_digest`
        builds an honest one). Not overriding it means `verify` is not
        declared and hosts re-query instead."""
        return [{"frame": dict(i), "status": "unknown"} for i in identities]
