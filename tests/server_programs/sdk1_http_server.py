"""A Streamable HTTP server built on the official Python SDK 1.x (`mcp==1.30.0`), the SDK
most deployed Python servers (FastMCP 2.x, mcp-proxy) are built on. Run it with the SDK 1.x
venv's Python (`.venv-sdk1/bin/python`, made by `make setup`); it prints `LISTENING <url>`
once the socket accepts connections and serves until SIGTERM.

SDK 1.x answers the 2026-07-28 `server/discover` probe with HTTP 400 and an error whose id
is "server-error": what a client must take as "speaks the initialize handshake" at once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket

import uvicorn
from mcp.server.fastmcp import FastMCP
from mcp.server.transport_security import TransportSecuritySettings

HOST = "127.0.0.1"
SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=[f"{HOST}:*", "localhost:*"],
    allowed_origins=[f"http://{HOST}:*", "http://localhost:*"],
)

server = FastMCP("sdk1-test-server", transport_security=SECURITY)


@server.tool()
def echo(text: str) -> str:
    """Return the text argument."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Announcing(uvicorn.Server):
    """Uvicorn that prints its real URL once listening and stops at once on SIGTERM."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            port = self.servers[0].sockets[0].getsockname()[1]
            print(f"LISTENING http://{HOST}:{port}/mcp", flush=True)

    def handle_exit(self, sig: int, frame: object) -> None:
        super().handle_exit(sig, frame)  # type: ignore[arg-type]
        self.force_exit = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--json-response", action="store_true")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    server.settings.json_response = args.json_response
    app = server.streamable_http_app()
    config = uvicorn.Config(app, host=HOST, port=args.port, log_level="warning")
    asyncio.run(Announcing(config).serve())


if __name__ == "__main__":
    main()
