"""The stdio runner: one envelope per line on stdin/stdout.

- Lock-step (the provider did not declare `correlation`): each request is
  answered, in order, by the reading thread itself; replies carry no `id`.
- Correlated: up to `max_in_flight` requests outstanding, run on up to
  `max_workers` worker threads, each reply echoing its request `id` (H4).
  When the limit is reached the runner stops reading (backpressure) instead
  of queueing without bound.
- `shutdown` or end of input stops reading, lets in-flight work finish
  within `shutdown_grace` seconds, flushes, and returns (R2).
- A line longer than `max_line_bytes` is discarded unread and answered
  `bad_request`; serving goes on (R1).

`serve_stdio` also moves the process's stdout out of the way (file
descriptor 1 and `sys.stdout` are pointed at stderr), so a stray `print()`
in provider code cannot corrupt the protocol channel.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from typing import IO, Callable, Iterator, List, Optional, Union

from .provider import Provider
from .session import IGNORE, REPLY, RUN, SHUTDOWN, Job, Session, diag

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
_CHUNK = 1 << 16


class _Oversized:
    __slots__ = ("discarded",)

    def __init__(self, discarded: int) -> None:
        self.discarded = discarded


def _lines(read: Callable[[int], bytes], max_line_bytes: int) -> Iterator[Union[bytes, _Oversized]]:
    """Lines of the input without their newline (a trailing `\\r` is kept
    for the JSON parser, which treats it as whitespace); a line over the cap
    is skipped to its newline and reported as `_Oversized`."""
    buf = b""
    skipping = 0  # > 0: inside an oversized line, this many bytes dropped so far
    while True:
        chunk = read(_CHUNK)
        if not chunk:
            if skipping:
                yield _Oversized(skipping)
            elif buf.strip():
                yield buf
            return
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                skipping += len(chunk)
                continue
            yield _Oversized(skipping + nl)
            skipping = 0
            chunk = chunk[nl + 1:]
        buf += chunk
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            if nl - start > max_line_bytes:
                yield _Oversized(nl - start)
            else:
                line = buf[start:nl]
                if line.strip():
                    yield line
            start = nl + 1
        buf = buf[start:]
        if len(buf) > max_line_bytes:
            skipping = len(buf)
            buf = b""


class _Output:
    """The output, written by whichever thread has a reply, under one lock,
    so lines never interleave. The thread that brings the count of pending
    writers back to zero flushes: a lone reply is flushed at once, replies
    finished together share one flush."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream: Optional[IO[bytes]] = stream
        self._lock = threading.Lock()
        self._writers = 0
        self._count = threading.Lock()
        self.failed = False

    def send(self, data: bytes) -> bool:
        with self._count:
            self._writers += 1
        with self._lock:
            with self._count:
                self._writers -= 1
                last = self._writers == 0
            if self._stream is None or self.failed:
                return False
            try:
                self._stream.write(data)
                if last:
                    self._stream.flush()
                return True
            except (OSError, ValueError):
                self.failed = True
                return False

    def close(self) -> None:
        with self._lock:
            stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                self.failed = True


def serve(
    provider: Provider,
    read: Callable[[int], bytes],
    output: IO[bytes],
    *,
    max_in_flight: int = 64,
    max_workers: int = 4,
    shutdown_grace: float = 2.0,
    enforce_honesty: bool = True,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> None:
    """Serve `provider` over a byte stream: `read(n)` returns up to `n`
    bytes (b"" at end of input), replies go to `output`. Returns after
    `shutdown` or end of input, once in-flight work finished or the grace
    period passed (work still running then is abandoned, its reply
    dropped)."""
    session = Session(provider, enforce_honesty=enforce_honesty)
    out = _Output(output)
    name = session.info.get("name")
    in_flight = threading.Semaphore(max(1, max_in_flight))
    pending = [0]
    idle = threading.Condition()
    jobs: "queue.SimpleQueue[Optional[Job]]" = queue.SimpleQueue()

    def worker() -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            try:
                out.send(session.encode_reply(session.run(job)))
            finally:
                in_flight.release()
                with idle:
                    pending[0] -= 1
                    if pending[0] == 0:
                        idle.notify_all()

    workers: List[threading.Thread] = []
    if session.correlated:
        for i in range(max(1, min(max_workers, max_in_flight))):
            # Daemon threads: a query still hung after the grace period must
            # not keep the process from exiting (R2).
            t = threading.Thread(target=worker, name="cgp-worker-%d" % i, daemon=True)
            t.start()
            workers.append(t)

    for line in _lines(read, max_line_bytes):
        if out.failed:
            break
        if isinstance(line, _Oversized):
            reply = session._bad_request(
                None,
                "R1: a line of %d bytes exceeds this provider's %d-byte line limit and was discarded; send smaller envelopes"
                % (line.discarded, max_line_bytes),
            )
            out.send(session.encode_reply(reply))
            continue
        tag, payload = session.dispatch_line(line)
        if tag == REPLY:
            out.send(session.encode_reply(payload))
        elif tag == RUN:
            if not session.correlated:
                out.send(session.encode_reply(session.run(payload)))
                continue
            in_flight.acquire()
            with idle:
                pending[0] += 1
            jobs.put(payload)
        elif tag == SHUTDOWN:
            break
        elif tag == IGNORE:
            continue

    deadline = time.monotonic() + max(0.0, shutdown_grace)
    with idle:
        while pending[0] > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                diag("%s: %d request(s) still running after the %.1f s shutdown grace; their replies are dropped" % (name, pending[0], shutdown_grace))
                break
            idle.wait(left)
    out.close()
    for _ in workers:
        jobs.put(None)


def serve_stdio(provider: Provider, **options: object) -> None:
    """Serve `provider` on this process's stdin/stdout until `shutdown` or
    end of input (options as for `serve`). Call it from `main`; then let the
    process exit (status 0)."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    # A stray print() now lands on stderr instead of corrupting the channel.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    output = os.fdopen(protocol_fd, "wb", buffering=1 << 16)
    stdin_fd = sys.stdin.fileno() if sys.stdin is not None else 0

    def read(n: int) -> bytes:
        while True:
            try:
                return os.read(stdin_fd, n)
            except InterruptedError:
                continue
            except OSError:
                return b""

    serve(provider, read, output, **options)  # type: ignore[arg-type]
