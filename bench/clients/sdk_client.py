"""The official `mcp` SDK (v2): `stdio_client` / `streamable_http_client` + `ClientSession`,
as its docs show."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from .base import CALL_TIMEOUT


class SdkSession:
    def __init__(self, session: ClientSession) -> None:
        self._session = session

    async def echo(self, text: str) -> str:
        result = await self._session.call_tool("echo", {"text": text}, CALL_TIMEOUT)
        block = result.content[0]
        assert isinstance(block, TextContent)
        return block.text

    async def big(self, size: int) -> int:
        result = await self._session.call_tool("big", {"size": size}, CALL_TIMEOUT)
        block = result.content[0]
        assert isinstance(block, TextContent)
        return len(block.text)


@asynccontextmanager
async def connect(command: str, args: Sequence[str]) -> AsyncIterator[SdkSession]:
    params = StdioServerParameters(command=command, args=list(args))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        yield SdkSession(session)


@asynccontextmanager
async def connect_http(url: str) -> AsyncIterator[SdkSession]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        yield SdkSession(session)
