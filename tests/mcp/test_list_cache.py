"""List caching (SEP-2549): a list page whose result says `ttlMs` is served again without a
request while fresh; a list-changed notification, a lapsed TTL or no TTL at all mean asking
the server again; `cache_hints` says what the last list said."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.scripted_server import Json, result, scripted_session

pytestmark = pytest.mark.virtual_time


class Lister:
    """A scripted server whose tools/list says `hints` (pages of two tools with `pages`),
    counting the lists asked for."""

    def __init__(self, hints: Json, *, pages: int = 1) -> None:
        self.hints = hints
        self.pages = pages
        self.asked: list[Any] = []
        self.version = 1

    def __call__(self, message: Json) -> list[Any] | None:
        if message.get("method") == "tools/call":  # "change": the tools change
            self.version += 1
            changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            return [changed, result(message, {"content": []})]
        if message.get("method") != "tools/list":
            return None
        cursor = (message.get("params") or {}).get("cursor")
        self.asked.append(cursor)
        page = int(cursor or 0)
        tools = [
            {"name": f"t{page}{i}-v{self.version}", "inputSchema": {"type": "object"}}
            for i in range(2)
        ]
        body: Json = {"tools": tools, **self.hints}
        if page + 1 < self.pages:
            body["nextCursor"] = str(page + 1)
        return [result(message, body)]


async def names(session: Any) -> list[str]:
    return [tool.name for tool in await session.list_tools()]


async def test_a_list_with_a_ttl_is_served_again_while_fresh_then_asked_for() -> None:
    server = Lister({"ttlMs": 60_000, "cacheScope": "public"}, pages=2)
    async with scripted_session(server) as session:
        first = await names(session)
        assert await names(session) == first
        assert server.asked == [None, "1"]
        assert session.cache_hints("tools/list") == (60_000, "public")
        await asyncio.sleep(61)
        server.version = 2
        assert await names(session) == ["t00-v2", "t01-v2", "t10-v2", "t11-v2"]
        assert server.asked == [None, "1", None, "1"]


async def test_list_changed_makes_the_cached_list_stale_at_once() -> None:
    server = Lister({"ttlMs": 3_600_000, "cacheScope": "private"})
    async with scripted_session(server) as session:
        await names(session)
        await session.call_tool("change")  # the notification comes before the answer
        assert await names(session) == ["t00-v2", "t01-v2"]
        assert len(server.asked) == 2


@pytest.mark.parametrize("hints", [{}, {"ttlMs": 0}, {"ttlMs": -5}, {"ttlMs": "60000"}])
async def test_without_a_positive_ttl_every_list_asks_the_server(hints: Json) -> None:
    server = Lister(hints)
    async with scripted_session(server) as session:
        await names(session)
        await names(session)
    assert server.asked == [None, None]
