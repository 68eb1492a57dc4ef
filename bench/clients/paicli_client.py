"""paicli.mcp, used the way its docs show (stdio, and Streamable HTTP for the HTTP runs)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import paicli.mcp as m

from .base import CALL_TIMEOUT


class PaicliSession:
    def __init__(self, session: m.ClientSession) -> None:
        self._session = session

    async def echo(self, text: str) -> str:
        result = await self._session.call_tool("echo", {"text": text}, timeout=CALL_TIMEOUT)
        block = result.content[0]
        assert isinstance(block, m.TextContent)
        return block.text

    async def big(self, size: int) -> int:
        result = await self._session.call_tool("big", {"size": size}, timeout=CALL_TIMEOUT)
        block = result.content[0]
        assert isinstance(block, m.TextContent)
        return len(block.text)


@asynccontextmanager
async def connect(command: str, args: Sequence[str]) -> AsyncIterator[PaicliSession]:
    async with m.connect(m.StdioServer(command, args=list(args))) as session:
        await session.list_tools()
        yield PaicliSession(session)


@asynccontextmanager
async def connect_http(url: str) -> AsyncIterator[PaicliSession]:
    # "http": Streamable HTTP only, as a user who knows the server would configure it.
    async with m.connect(m.HttpServer(url, transport="http")) as session:
        await session.list_tools()
        yield PaicliSession(session)
