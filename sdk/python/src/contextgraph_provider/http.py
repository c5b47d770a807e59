"""Serve a provider over HTTP with the standard library: one envelope is the
body of a `POST` to the endpoint path (default `/cgp`), the reply envelope
is the response body (`200`, `application/json`). Every protocol outcome,
errors included, is a 200 with an envelope; an envelope that calls for no
reply (an unknown notification, `shutdown`) gets `204`.

Before the session sees a byte, in this order (empty bodies unless noted):
- a loopback server answers `421` to a `Host` that is not loopback (a
  DNS-rebinding web page cannot read the provider);
- `401` with `WWW-Authenticate: Bearer` when a token is configured and the
  request does not carry it (compared in constant time, C8);
- `404` for another path, `405` for another method, `415` for a body that
  is not `application/json`, `411` without a Content-Length;
- `413` for a body over the limit, with a `bad_request` envelope, the body
  left unread; `408` when the body does not arrive in time.

Binding: loopback needs nothing. Any other address is refused unless the
server has TLS and a token (C7), or `allow_insecure_public` is set for a
proxy that provides them. Logs name the method, status and reply type,
never a header, a body or the token (C8).

HTTP has no connection a handshake could belong to, so the server keeps
one session for its whole life: a query before any compatible handshake is
answered `bad_request`; `shutdown` is answered 204 and the server keeps
serving other hosts until it is stopped.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import urlsplit

from .provider import Provider
from .session import Session, diag

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024


class ExposureError(ValueError):
    """The server would be reachable off this machine without TLS and a
    token (C7, C8)."""


def is_loopback_host(host: str) -> bool:
    """Whether `host` (a name or address, IPv6 possibly in brackets, port
    removed) is this machine: `localhost`, 127.0.0.0/8 or ::1."""
    bare = host.strip("[]")
    if bare.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def _host_of(header: str) -> str:
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: Any, handler: Any, family: int) -> None:
        self.address_family = family
        super().__init__(address, handler)


class HttpProviderServer:
    """A provider served over HTTP. `serve_forever()` blocks; `shutdown()`
    (from another thread) stops it; `url` is the endpoint."""

    def __init__(
        self,
        provider: Provider,
        host: str = "127.0.0.1",
        port: int = 8700,
        *,
        path: str = "/cgp",
        token: Optional[str] = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_in_flight: int = 64,
        body_timeout: float = 10.0,
        tls_cert: Optional[str] = None,
        tls_key: Optional[str] = None,
        allow_insecure_public: bool = False,
        enforce_honesty: bool = True,
        log: bool = True,
    ) -> None:
        token = token.strip() if token is not None else None
        if token is not None and (not token or any(c.isspace() or not c.isprintable() or ord(c) > 126 for c in token)):
            raise ValueError("the bearer token must be non-empty printable ASCII without spaces")
        loopback = is_loopback_host(host)
        if not loopback and not allow_insecure_public and not (token and tls_cert):
            raise ExposureError(
                "refusing to serve on %s without TLS and a bearer token (C7): bind a loopback address, "
                "or give tls_cert/tls_key and a token, or set allow_insecure_public behind a proxy that provides them" % host
            )
        self.session = Session(provider, enforce_honesty=enforce_honesty)
        self.loopback = loopback
        self.path = path
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.log = log
        self._token = token.encode("ascii") if token else None
        # Lock-step providers get one call at a time, as over stdio.
        limit = max_in_flight if self.session.correlated else 1
        self._calls = threading.BoundedSemaphore(max(1, limit))
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._httpd = _Server((host.strip("[]"), port), self._handler_class(), family)
        scheme = "http"
        if tls_cert:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls_cert, tls_key)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
            scheme = "https"
        bound = self._httpd.server_address
        shown = "[%s]" % bound[0] if family == socket.AF_INET6 else bound[0]
        self.url = "%s://%s:%d%s" % (scheme, shown, bound[1], path)

    def serve_forever(self) -> None:
        """Serve until `shutdown()`."""
        self._httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stop serving and close the listening socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def authorized(self, header: Optional[str]) -> bool:
        """Whether an `Authorization` header carries the token (constant-time
        comparison, so timing does not reveal how much of a guess was right)."""
        if self._token is None:
            return True
        if not header or not header.startswith("Bearer "):
            return False
        return hmac.compare_digest(header[len("Bearer "):].strip().encode("utf-8", "replace"), self._token)

    def _handler_class(self) -> type:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "contextgraph-provider-python"
            sys_version = ""

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # the default line names the path; ours is in _send

            def _send(self, status: int, body: bytes = b"", kind: str = "-", headers: Any = ()) -> None:
                self.send_response_only(status)
                self.send_header("Date", self.date_time_string())
                for name, value in headers:
                    self.send_header(name, value)
                if body:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body and self.command != "HEAD":
                    self.wfile.write(body)
                if server.log:
                    diag("%s: %s %d %s" % (server.session.info.get("name"), self.command, status, kind))

            def _gate(self) -> bool:
                """The checks every request passes first; False once answered."""
                if server.loopback and not is_loopback_host(_host_of(self.headers.get("Host", ""))):
                    self._send(421, kind="non-loopback Host")
                    self.close_connection = True
                    return False
                if not server.authorized(self.headers.get("Authorization")):
                    self._send(401, headers=[("WWW-Authenticate", "Bearer")], kind="unauthorized")
                    self.close_connection = True
                    return False
                if urlsplit(self.path).path != server.path:
                    self._send(404, kind="unknown path")
                    return False
                return True

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                if not self._gate():
                    return
                ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
                if ctype != "application/json":
                    self.close_connection = True
                    return self._send(415, kind="not application/json")
                length_text = self.headers.get("Content-Length")
                if length_text is None or not length_text.strip().isdigit():
                    self.close_connection = True
                    return self._send(411, kind="no content-length")
                length = int(length_text)
                if length > server.max_body_bytes:
                    self.close_connection = True
                    reply = server.session._bad_request(
                        None,
                        "R1: a body of %d bytes exceeds this provider's %d-byte limit; send smaller envelopes" % (length, server.max_body_bytes),
                    )
                    return self._send(413, server.session.encode_reply(reply), "error bad_request")
                self.connection.settimeout(server.body_timeout)
                try:
                    body = self.rfile.read(length)
                except (socket.timeout, OSError):
                    body = b""
                if len(body) != length:
                    self.close_connection = True
                    return self._send(408, kind="body timeout")
                self.connection.settimeout(None)
                with server._calls:
                    reply = server.session.handle_line(body)
                if reply is None:
                    return self._send(204, kind="no reply")
                kind = reply.get("type", "-")
                if kind == "error":
                    kind += " " + str(reply.get("code"))
                self._send(200, server.session.encode_reply(reply).rstrip(b"\n"), kind)

            def _not_allowed(self) -> None:
                if self._gate():
                    self.close_connection = True
                    self._send(405, headers=[("Allow", "POST")], kind="method not allowed")

            do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _not_allowed  # noqa: N815

        return Handler


def serve_http(provider: Provider, host: str = "127.0.0.1", port: int = 8700, **options: Any) -> None:
    """Serve `provider` over HTTP until interrupted (options as for
    `HttpProviderServer`). Prints `listening on <url>` to stderr."""
    server = HttpProviderServer(provider, host, port, **options)
    diag("%s: listening on %s" % (server.session.info.get("name"), server.url))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()


