"""The SDK interop server (`sdk_server.py`) served over HTTP, for HTTP transport interop tests.

`--transport streamable` serves Streamable HTTP at /mcp (optionally `--json-response` and/or
`--stateless`); `--transport sse` serves the legacy 2024-11-05 HTTP+SSE transport (GET /sse,
POST /messages/). Prints `LISTENING <url>` once the socket accepts connections. Siblings are
imported directly: run as a script, this directory is sys.path[0].
"""

from __future__ import annotations

import argparse
import logging

from http_fault_server import HOST, serve
from mcp.server.transport_security import TransportSecuritySettings
from sdk_server import server
from starlette.applications import Starlette

# Spelled out rather than left to the SDK's host-based default, so the server keeps accepting
# `Host: 127.0.0.1:PORT` (any port, since we may bind port 0) even if that default changes.
SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=[f"{HOST}:*", "localhost:*"],
    allowed_origins=[f"http://{HOST}:*", "http://localhost:*"],
)


def build_app(transport: str, *, json_response: bool, stateless: bool) -> tuple[Starlette, str]:
    """The ASGI app for `transport` and the path a client should be pointed at."""
    if transport == "sse":
        return server.sse_app(transport_security=SECURITY, host=HOST), "/sse"
    app = server.streamable_http_app(
        json_response=json_response,
        stateless_http=stateless,
        transport_security=SECURITY,
        host=HOST,
    )
    return app, "/mcp"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--transport", choices=("streamable", "sse"), default="streamable")
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()

    # Building `server` set root logging to INFO; per-session chatter would bury real errors.
    logging.getLogger().setLevel(logging.WARNING)
    app, path = build_app(
        args.transport, json_response=args.json_response, stateless=args.stateless
    )
    serve(app, args.port, path)


if __name__ == "__main__":
    main()
