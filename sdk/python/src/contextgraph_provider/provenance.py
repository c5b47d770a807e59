"""File provenance (F5): which bytes a `file://` URI plus an `L<a>-<b>`
range address, their digest, and the URI itself.

Which bytes a range addresses: a file is split into lines at every `\\n`.
Line n (1-based) is the bytes from the start of the line through its
terminating `\\n` inclusive (a CRLF line keeps its `\\r\\n`); the last line
may lack a terminator and then runs to the end of the file. A file ending in
`\\n` has no empty line after it; an empty file has no lines. This is the
rule of the Rust SDK and of the conformance suite, which re-reads the file
and re-hashes exactly these bytes.

A range that reaches past the last line is an error, never a silently
shortened excerpt: a digest over fewer bytes than the range claims would
lie about where the content came from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, Optional
from urllib.parse import quote, unquote_to_bytes

from .frames import Frame, frame
from .wire import sha256_digest

# RFC 3986 unreserved characters, the separator, and the sub-delimiters and
# ':'/'@' a path segment may carry; everything else is percent-encoded.
_SAFE = "/-._~!$&'()*+,;=:@"


class ProvenanceError(ValueError):
    """An excerpt or its provenance could not be produced (the message says
    why and what to do)."""


def path_to_file_uri(path: "os.PathLike[str] | str") -> str:
    """`path` made absolute (without resolving symlinks) as `file:///…`, with
    spaces and other non-URI bytes percent-encoded. Pass a canonical path
    (`os.path.realpath`) when the same file must always get the same URI."""
    absolute = os.path.abspath(os.fspath(path))
    return "file://" + quote(os.fsencode(absolute), safe=_SAFE)


def file_uri_to_path(uri: str) -> str:
    """The local path a `file:///…` (or `file://localhost/…`) URI names."""
    if not isinstance(uri, str) or not uri.startswith("file:"):
        raise ProvenanceError("%r is not a file: URI" % (uri,))
    rest = uri[len("file:"):]
    if "?" in rest or "#" in rest:
        raise ProvenanceError("%r has a query or fragment; percent-encode '?' and '#'" % (uri,))
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            raise ProvenanceError("%r names host %r; only local files can be read" % (uri, authority))
        rest = slash + path
    if not rest.startswith("/"):
        raise ProvenanceError("%r has no absolute path" % (uri,))
    raw = unquote_to_bytes(rest)
    if b"\x00" in raw:
        raise ProvenanceError("%r decodes to a NUL byte" % (uri,))
    return os.fsdecode(raw)


def read_range(data: bytes, start: int, end: int) -> Optional[bytes]:
    """The exact bytes of lines `start..=end` of `data`, terminators included;
    None when the range is invalid or reaches past the last line. Hashing the
    result reproduces a provenance `digest`."""
    if start < 1 or end < start:
        return None
    offset = 0
    line = 0
    begin = None
    n = len(data)
    while offset < n:
        line += 1
        nl = data.find(b"\n", offset)
        stop = n if nl < 0 else nl + 1
        if line == start:
            begin = offset
        if line == end:
            return data[begin:stop]
        offset = stop
    return None


def count_lines(data: bytes) -> int:
    """How many lines `data` has: the number of `\\n`, plus one if the last
    line is unterminated."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def file_provenance(uri: str, data: bytes, range_: Optional[str] = None, method: str = "", by: str = "") -> Dict[str, Any]:
    """A `file` provenance entry whose digest is over exactly `data` (the
    bytes `uri` + `range_` address; the whole file when `range_` is None)."""
    entry: Dict[str, Any] = {"type": "file", "uri": uri}
    if range_ is not None:
        entry["range"] = range_
    entry["digest"] = sha256_digest(data)
    if method:
        entry["method"] = method
    if by:
        entry["by"] = by
    return entry


@dataclass(frozen=True)
class FileExcerpt:
    """A region of a file, its exact bytes, and the F5 provenance entry
    describing them."""

    data: bytes
    """Exactly the bytes the range addresses."""
    provenance: Dict[str, Any]
    """`{type: file, uri, range, digest, method, by}`; digest over `data`."""
    start: int
    end: int
    label: str
    """A citation label, `<file name> L<a>-<b>`."""

    @property
    def range(self) -> str:
        return "L%d-%d" % (self.start, self.end)

    def text(self) -> str:
        """The excerpt as text; ProvenanceError when it is not UTF-8 (inline
        content must be these exact bytes, and JSON strings are UTF-8)."""
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProvenanceError(
                "the bytes of %s are not valid UTF-8 (first bad byte at offset %d); serve the file another way or skip it"
                % (self.range, e.start)
            ) from None

    def frame(self, id: str, kind: str, title: str, **kwargs: Any) -> Frame:
        """A frame carrying this excerpt as content, with its URI, provenance
        and label set (keyword arguments go to `frame()`)."""
        kwargs.setdefault("uri", self.provenance["uri"])
        kwargs.setdefault("citation_label", self.label)
        extra = list(kwargs.pop("provenance", ()))
        return frame(id, kind, title, self.text(), provenance=[self.provenance] + extra, **kwargs)


def file_excerpt(path: "os.PathLike[str] | str", data: bytes, start: int, end: int, method: str = "", by: str = "") -> FileExcerpt:
    """Lines `start..=end` of the file at `path` whose full contents, as read
    at retrieval time, are `data`; with F5 provenance (`file://` URI,
    `L<a>-<b>`, SHA-256 of exactly those bytes). ProvenanceError when the
    range is invalid or reaches past the end of the file."""
    uri = path_to_file_uri(path)
    if start < 1 or end < start:
        raise ProvenanceError("range L%d-%d is not 1 <= start <= end" % (start, end))
    excerpt = read_range(data, start, end)
    if excerpt is None:
        raise ProvenanceError(
            "range L%d-%d reaches past the end of the file, which has %d line(s); clamp the range to the file"
            % (start, end, count_lines(data))
        )
    name = os.path.basename(os.fspath(path)) or uri
    rng = "L%d-%d" % (start, end)
    return FileExcerpt(excerpt, file_provenance(uri, excerpt, rng, method, by), start, end, "%s %s" % (name, rng))


def whole_file_provenance(path: "os.PathLike[str] | str", data: bytes, method: str = "", by: str = "") -> Dict[str, Any]:
    """The F5 provenance of a whole file (no range: the whole resource)."""
    return file_provenance(path_to_file_uri(path), data, None, method, by)
