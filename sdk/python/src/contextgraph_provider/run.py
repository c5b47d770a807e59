"""`run(provider, argv)`: one `main` for both transports.

    python3 my_provider.py                                  # stdio (a host spawns it)
    python3 my_provider.py --http 127.0.0.1:8700            # HTTP on loopback
    python3 my_provider.py --http 127.0.0.1:0 --token-env CGP_TOKEN

The token is read from an environment variable or a file, never from the
command line (where `ps` would show it).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

from .provider import Provider
from .stdio import serve_stdio


def _address(text: str) -> tuple:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:8700 (port 0 picks a free one)")
    return host, int(port)


def run(provider: Provider, argv: Optional[Sequence[str]] = None) -> int:
    """Serve `provider` as the command line says (stdio by default); returns
    the exit status for `sys.exit`."""
    parser = argparse.ArgumentParser(description="Serve %s (a Context Graph Protocol provider)." % (provider.name or "this provider"))
    parser.add_argument("--http", type=_address, metavar="HOST:PORT", help="serve over HTTP instead of stdio")
    parser.add_argument("--token-env", metavar="VAR", help="require the bearer token held in this environment variable")
    parser.add_argument("--token-file", metavar="FILE", help="require the bearer token held in this file")
    parser.add_argument("--tls-cert", metavar="PEM")
    parser.add_argument("--tls-key", metavar="PEM")
    parser.add_argument("--path", default="/cgp", help="HTTP endpoint path (default /cgp)")
    args = parser.parse_args(argv)
    if args.http is None:
        if args.token_env or args.token_file or args.tls_cert:
            parser.error("--token-env, --token-file and --tls-cert need --http")
        serve_stdio(provider)
        return 0
    from .http import ExposureError, serve_http

    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            parser.error("environment variable %s is unset or empty" % args.token_env)
    elif args.token_file:
        try:
            with open(args.token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as e:
            parser.error("cannot read --token-file: %s" % e.strerror)
    try:
        serve_http(provider, args.http[0], args.http[1], path=args.path, token=token, tls_cert=args.tls_cert, tls_key=args.tls_key)
    except (ExposureError, ValueError, OSError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    return 0
