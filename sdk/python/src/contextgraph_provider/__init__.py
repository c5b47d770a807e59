"""Provider SDK for the Context Graph Protocol (CGP).

Subclass `Provider` (identity, data flow, capabilities, `query`, and
optionally `verify`) and hand it to a runner; the runner speaks the protocol:

- `serve_stdio` / `serve_http` / `run`: handshake, correlation (several
  queries in flight on worker threads), malformed input, the honesty guard,
  shutdown;
- `frame()`: frames whose `token_cost` (B3) and `content_digest` (D1) are
  computed, never typed;
- `file_excerpt`, `read_range`, `path_to_file_uri`: file provenance whose
  digest covers exactly the addressed bytes (F5);
- `pack` with `filter_kinds`, `filter_as_of`, `rank`: an answer that honours
  the budget (B1, B4) and says truthfully what it left out;
- `audit_answer`, `verdict_by_digest`: the checks the runner applies, and an
  honest verify verdict, callable from a provider's own tests.

Over stdio, stdout is the protocol channel; `serve_stdio` points `print()`
at stderr so stray output cannot corrupt it.
"""

from .audit import Violation, audit_answer, audit_frame, complete_verdicts, verdict_by_digest
from .frames import Frame, clamp_score, frame, relation
from .pack import Result, filter_as_of, filter_kinds, pack, rank
from .provenance import (
    FileExcerpt,
    ProvenanceError,
    count_lines,
    file_excerpt,
    file_provenance,
    file_uri_to_path,
    path_to_file_uri,
    read_range,
    whole_file_provenance,
)
from .provider import Provider, ProviderError
from .query import Query, QueryError, parse_query
from .session import Session
from .stdio import serve, serve_stdio
from .wire import (
    KINDS,
    PROTOCOL_VERSION,
    content_digest,
    format_timestamp,
    is_sha256_digest,
    parse_timestamp,
    sha256_digest,
    token_cost,
    versions_compatible,
)

__version__ = "0.1.0"

# The HTTP server (and `run`, which can start it) pull in http.server and
# ssl, a large share of start-up time; a stdio provider never needs them, so
# they are imported on first use (PEP 562).
_LAZY = {
    "ExposureError": "http",
    "HttpProviderServer": "http",
    "serve_http": "http",
    "run": "run",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    from importlib import import_module

    value = getattr(import_module("." + module, __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "KINDS", "PROTOCOL_VERSION", "ExposureError", "FileExcerpt", "Frame", "HttpProviderServer",
    "ProvenanceError", "Provider", "ProviderError", "Query", "QueryError", "Result", "Session",
    "Violation", "audit_answer", "audit_frame", "clamp_score", "complete_verdicts", "content_digest",
    "count_lines", "file_excerpt", "file_provenance", "file_uri_to_path", "filter_as_of",
    "filter_kinds", "format_timestamp", "frame", "is_sha256_digest", "pack", "parse_query",
    "parse_timestamp", "path_to_file_uri", "rank", "read_range", "relation", "run", "serve",
    "serve_http", "serve_stdio", "sha256_digest", "token_cost", "verdict_by_digest",
    "versions_compatible", "whole_file_provenance",
]
