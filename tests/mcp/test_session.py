"""`ClientSession` against hand-written servers in memory: pagination limits."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from paicli.mcp import session as session_module
from tests.scripted_server import Json, result, scripted_session


def tool(name: str) -> Json:
    return {"name": name, "inputSchema": {"type": "object"}}


def endless_pages(page_size: int) -> Any:
    """A tools/list that hands out `page_size` new tools and a fresh cursor on every page."""
    pages = 0

    def script(message: Json) -> list[Any] | None:
        nonlocal pages
        if message.get("method") != "tools/list":
            return None
        pages += 1
        tools = [tool(f"t{pages}-{i}") for i in range(page_size)]
        return [result(message, {"tools": tools, "nextCursor": f"c{pages}"})]

    return script


async def test_a_fresh_cursor_on_every_page_stops_at_the_page_limit_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with asyncio.timeout(20), scripted_session(endless_pages(1)) as session:
        with caplog.at_level(logging.WARNING, logger="paicli.mcp.session"):
            tools = await session.list_tools()
    assert len(tools) == session_module.MAX_PAGES
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith("scripted: tools/list: stopped after 100 pages")


async def test_a_list_stops_at_the_item_limit_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with asyncio.timeout(20), scripted_session(endless_pages(3000)) as session:
        with caplog.at_level(logging.WARNING, logger="paicli.mcp.session"):
            tools = await session.list_tools()
    assert len(tools) == session_module.MAX_ITEMS
    assert tools[-1].name == "t4-999"
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith("scripted: tools/list: stopped at 10000 items")
