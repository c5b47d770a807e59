"""Wire vocabulary and the value rules every party can recompute.

Everything here is a pure function of its input, so a provider, a host and
a conformance suite reach the same answer: the token cost of content (B3),
the digest of bytes (D1, F5), the timestamp form (F4) and the protocol
version families (H1, H3).
"""

from __future__ import annotations

import calendar
import hashlib
import re
from typing import Optional, Tuple

PROTOCOL_VERSION = "contextgraph/1.0-draft"
"""The protocol version this SDK speaks."""

KINDS = ("snippet", "symbol", "fact", "doc", "memory", "episode", "graph")
"""The frame kinds of the contextgraph/1 family (closed within the family)."""

ERROR_CODES = (
    "bad_request",
    "unsupported_kind",
    "unsupported_representation",
    "incompatible_version",
    "budget_unsatisfiable",
    "unavailable",
    "shutting_down",
    "internal",
)
"""The error codes the protocol defines (the vocabulary is open: `vendor:name`)."""

U32_MAX = 0xFFFFFFFF

_VERSION = re.compile(r"^contextgraph/([0-9]+)\.([0-9]+)(-draft)?$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_TIMESTAMP = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?Z$"
)
_RANGE = re.compile(r"^L([0-9]+)-([0-9]+)$")


def token_cost(content: Optional[str]) -> int:
    """B3: `ceil(utf8_bytes(content) / 4)`, 0 for no content.

    The same rule as the Rust types crate (`token_cost_for`): bytes of the
    UTF-8 encoding, not characters, so "é" (2 bytes) costs what 2 ASCII
    letters cost. Saturates at u32::MAX like the wire type.
    """
    if content is None:
        return 0
    n = len(content.encode("utf-8"))
    return min((n + 3) // 4, U32_MAX)


def sha256_digest(data: bytes) -> str:
    """`sha256:` + 64 lowercase hex digits of exactly `data` (D1, F5)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def content_digest(content: str) -> str:
    """D1: the digest of a frame's inline content, over its exact UTF-8 bytes."""
    return sha256_digest(content.encode("utf-8"))


def is_sha256_digest(text: object) -> bool:
    """Whether `text` is `sha256:` followed by 64 lowercase hex digits."""
    return isinstance(text, str) and _DIGEST.match(text) is not None


def protocol_family(version: str) -> Optional[str]:
    """The major family (`contextgraph/1`) of a version string, or None when
    the string does not fit the grammar (it then belongs to no family)."""
    if not isinstance(version, str):
        return None
    m = _VERSION.match(version)
    if m is None:
        return None
    return "contextgraph/" + str(int(m.group(1)))


def versions_compatible(a: str, b: str) -> bool:
    """H1/H3: two versions interoperate exactly when their families are equal."""
    fa, fb = protocol_family(a), protocol_family(b)
    return fa is not None and fa == fb


def parse_timestamp(text: object) -> Optional[Tuple[int, int]]:
    """F4: the instant `text` names as (unix seconds, nanoseconds), or None
    when it is not exactly `YYYY-MM-DDTHH:MM:SS(.f+)?Z` naming a real
    calendar instant. Compare the tuples, never the strings: `…:00Z` sorts
    after `…:00.5Z` as text although it is earlier."""
    if not isinstance(text, str):
        return None
    m = _TIMESTAMP.match(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    if not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 59:
        return None
    if year == 0:
        days_in_month = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    else:
        days_in_month = calendar.monthrange(year, month)[1]
    if day == 0 or day > days_in_month:
        return None
    frac = m.group(7)
    nanos = int((frac[1:] + "000000000")[:9]) if frac else 0
    secs = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second
    return (secs, nanos)


def is_timestamp(text: object) -> bool:
    """Whether `text` is a valid F4 timestamp."""
    return parse_timestamp(text) is not None


def format_timestamp(unix_seconds: float) -> str:
    """The F4 wire form of an instant given in (possibly fractional) Unix
    seconds, to the microsecond, e.g. a file's `st_mtime`."""
    whole = int(unix_seconds // 1)
    micros = int(round((unix_seconds - whole) * 1_000_000))
    if micros == 1_000_000:
        whole, micros = whole + 1, 0
    days, rem = divmod(whole, 86400)
    year, month, day = _civil_from_days(days)
    text = "%04d-%02d-%02dT%02d:%02d:%02d" % (year, month, day, rem // 3600, rem % 3600 // 60, rem % 60)
    if micros:
        text += ".%06d" % micros
    return text + "Z"


def parse_range(text: object) -> Optional[Tuple[int, int]]:
    """F5: `L<start>-<end>` as (start, end), 1-based inclusive, or None when
    malformed or `start` is 0 or after `end`."""
    if not isinstance(text, str):
        return None
    m = _RANGE.match(text)
    if m is None:
        return None
    start, end = int(m.group(1)), int(m.group(2))
    if start < 1 or start > end:
        return None
    return (start, end)


def fingerprint_dimensions(fingerprint: object) -> Optional[int]:
    """E1: the dimension count of `<model-id>/<dimensions>[/<normalization>]`."""
    if not isinstance(fingerprint, str):
        return None
    parts = fingerprint.split("/")
    if len(parts) not in (2, 3) or any(p == "" for p in parts):
        return None
    if not parts[1].isdigit() or not parts[1].isascii():
        return None
    return int(parts[1])


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> Tuple[int, int, int]:
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return (y + (m <= 2), m, d)
