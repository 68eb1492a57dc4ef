"""FastMCP's `Client` over its stdio transport (one server process per connection) and its
Streamable HTTP transport."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import mcp.types
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport

from .base import CALL_TIMEOUT


class FastmcpSession:
    def __init__(self, client: Client[StdioTransport] | Client[StreamableHttpTransport]) -> None:
        self._client = client

    async def echo(self, text: str) -> str:
        result = await self._client.call_tool("echo", {"text": text}, timeout=CALL_TIMEOUT)
        block = result.content[0]
        assert isinstance(block, mcp.types.TextContent)
        return block.text

    async def big(self, size: int) -> int:
        result = await self._client.call_tool("big", {"size": size}, timeout=CALL_TIMEOUT)
        block = result.content[0]
        assert isinstance(block, mcp.types.TextContent)
        return len(block.text)


@asynccontextmanager
async def connect(command: str, args: Sequence[str]) -> AsyncIterator[FastmcpSession]:
    transport = StdioTransport(command, list(args), keep_alive=False)
    async with Client(transport) as client:
        await client.list_tools()
        yield FastmcpSession(client)


@asynccontextmanager
async def connect_http(url: str) -> AsyncIterator[FastmcpSession]:
    async with Client(StreamableHttpTransport(url)) as client:
        await client.list_tools()
        yield FastmcpSession(client)
