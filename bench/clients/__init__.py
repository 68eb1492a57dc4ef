"""Benchmark clients: one module per MCP client library, all with the same small interface.

Each module defines `connect(command, args)`, an async context manager yielding a `Session`
(see `base.py`) that is already through the handshake and has listed the server's tools.
This package imports no client library itself, so the runner can read `CLIENTS` cheaply.
"""

from __future__ import annotations

from typing import NamedTuple


class ClientInfo(NamedTuple):
    module: str  # the bench module implementing the interface
    import_code: str  # what a user imports to get this client (timed in a fresh process)
    stdio: bool = True  # whether it has `connect` (stdio); all clients have `connect_http`


CLIENTS: dict[str, ClientInfo] = {
    "paicli": ClientInfo("clients.paicli_client", "import paicli.mcp"),
    # paicli with an instrument on every session (same library; the cost of the feature).
    "paicli-trace": ClientInfo("clients.paicli_trace_client", "import paicli.mcp"),
    "paicli-metrics": ClientInfo("clients.paicli_metrics_client", "import paicli.mcp"),
    "mcp-sdk": ClientInfo("clients.sdk_client", "import mcp, mcp.client.stdio"),
    # `import fastmcp` alone defers the client (lazy __getattr__); getting Client is the
    # real cost of using it, so that is what is timed.
    "fastmcp": ClientInfo("clients.fastmcp_client", "from fastmcp import Client"),
    "bare": ClientInfo("clients.bare_client", "import asyncio, json"),
    # HTTP only: Streamable HTTP on raw asyncio sockets, the ceiling without an HTTP library.
    "raw-http": ClientInfo("clients.raw_http_client", "import asyncio, json", stdio=False),
}
