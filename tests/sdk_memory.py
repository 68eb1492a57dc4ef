"""The official SDK's server (tests/server_programs/sdk_server.py), run inside the test process.

Someone else's server implementation on our in-memory transport: the SDK serves its
dual-era loop on its own memory streams, and two pumps carry messages between those
streams and the server end of a `MemoryTransport.pair()` (as JSON, validated by the SDK's
own message type on the way in). Interop over real stdio stays in test_sdk_interop's
`real` tests; this is the in-memory tier's server for sessions, both eras, MRTR and
subscriptions.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

from paicli.mcp import ConnectionClosed, MemoryTransport
from tests.server_programs.sdk_server import server as sdk_server

__all__ = ["sdk_in_memory"]

# How long closing waits for the SDK's server loop to end after its input ends.
SHUTDOWN_TIMEOUT = 5.0


@asynccontextmanager
async def sdk_in_memory() -> AsyncIterator[MemoryTransport]:
    """Serve the SDK test server in this process; yield the client's transport."""
    client, server_end = MemoryTransport.pair()
    lowlevel = sdk_server._lowlevel_server
    async with create_client_server_memory_streams() as (sdk_side, server_streams):
        from_server, to_server = sdk_side
        server_read, server_write = server_streams

        async def to_sdk() -> None:
            try:
                while True:
                    message = await server_end.receive()
                    parsed = jsonrpc_message_adapter.validate_python(message)
                    await to_server.send(SessionMessage(parsed))
            except ConnectionClosed:
                pass
            finally:
                await to_server.aclose()

        async def from_sdk() -> None:
            try:
                async for item in from_server:
                    if isinstance(item, Exception):
                        raise item
                    wire = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
                    await server_end.send(wire)
            except (ConnectionClosed, anyio.ClosedResourceError, anyio.EndOfStream):
                pass
            finally:
                await server_end.aclose()

        async def serve() -> None:
            await lowlevel.run(server_read, server_write, lowlevel.create_initialization_options())

        tasks = [asyncio.ensure_future(job()) for job in (to_sdk, from_sdk, serve)]
        try:
            yield client
        finally:
            await client.aclose()
            try:
                async with asyncio.timeout(SHUTDOWN_TIMEOUT):
                    await asyncio.gather(*tasks[:1], tasks[2])
            finally:
                await server_write.aclose()
                tasks[1].cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
