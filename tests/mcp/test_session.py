"""`ClientSession` against hand-written servers in memory: pagination limits, roots
notices, the client's name and version."""

from __future__ import annotations

import asyncio
import logging
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pytest

from paicli.mcp import ClientHandlers, ClientSession, Root, _client_info
from paicli.mcp import _paging as paging
from tests.memory_servers import fault_in_memory
from tests.scripted_server import Json, result, scripted_session
from tests.transports import RecordingTransport


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
    assert len(tools) == paging.MAX_PAGES
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith("scripted: tools/list: stopped after 100 pages")


async def test_a_list_stops_at_the_item_limit_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with asyncio.timeout(20), scripted_session(endless_pages(3000)) as session:
        with caplog.at_level(logging.WARNING, logger="paicli.mcp.session"):
            tools = await session.list_tools()
    assert len(tools) == paging.MAX_ITEMS
    assert tools[-1].name == "t4-999"
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith("scripted: tools/list: stopped at 10000 items")


async def test_a_thousand_malformed_tools_are_five_warning_lines_and_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Over two pages, 1,000 tools whose inputSchema is not an object (each with a name of
    10,000 characters) among good ones: the good ones are listed, and the screen gets the
    first five named (each name cut short) and one line counting the rest."""
    long = "n" * 10_000

    def script(message: Json) -> list[Any] | None:
        if message.get("method") != "tools/list":
            return None
        page = 2 if message.get("params") else 1
        bad = [{"name": f"{long}{page}-{i}", "inputSchema": "no"} for i in range(500)]
        more = {"nextCursor": "c2"} if page == 1 else {}
        return [result(message, {"tools": [tool(f"good{page}"), *bad], **more})]

    async with asyncio.timeout(20), scripted_session(script) as session:
        with caplog.at_level(logging.WARNING, logger="paicli.mcp.session"):
            tools = await session.list_tools()
    assert [t.name for t in tools] == ["good1", "good2"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == paging.MAX_ITEM_WARNINGS + 1
    assert all(len(w) < 300 for w in warnings)
    assert warnings[0].startswith("scripted: tools/list: leaving out an item: tool 'nnn")
    assert warnings[0].endswith(": inputSchema must be an object")
    assert warnings[-1] == "scripted: tools/list: left out 995 more malformed items"


async def test_roots_changed_is_announced_to_a_legacy_server_that_was_told_it_may_be() -> None:
    seen: list[Json] = []

    def script(message: Json) -> list[Any] | None:
        seen.append(message)
        return None

    roots = [Root("file:///work/project", "project")]
    handlers = ClientHandlers(roots=roots)
    async with asyncio.timeout(20), scripted_session(script, handlers=handlers) as session:
        await session.notify_roots_changed()
        await session.ping()  # answered after the notice: the server has read it
    [initialize] = [m for m in seen if m.get("method") == "initialize"]
    assert initialize["params"]["capabilities"]["roots"] == {"listChanged": True}
    methods = [m.get("method") for m in seen]
    assert methods.index("notifications/roots/list_changed") < methods.index("ping")


async def test_roots_changed_sends_nothing_without_roots_or_to_a_modern_server() -> None:
    seen: list[Json] = []

    def script(message: Json) -> list[Any] | None:
        seen.append(message)
        return None

    async with asyncio.timeout(20), scripted_session(script) as session:
        await session.notify_roots_changed()
        await session.ping()
    assert "notifications/roots/list_changed" not in [m.get("method") for m in seen]
    handlers = ClientHandlers(roots=[Root("file:///work", "work")])
    async with (
        asyncio.timeout(20),
        fault_in_memory("modern") as inner,
        ClientSession(RecordingTransport(inner), name="modern", handlers=handlers) as modern,
    ):
        assert modern.era == "modern"
        await modern.notify_roots_changed()
        await modern.ping()
        sent = modern.transport
        assert isinstance(sent, RecordingTransport)
        assert all(m.get("method") != "notifications/roots/list_changed" for m in sent.sent)
        # The 2026 capabilities carry roots without the legacy flag.
        [discover] = [m for m in sent.sent if m.get("method") == "server/discover"][-1:]
        meta = discover["params"]["_meta"]
        assert meta["io.modelcontextprotocol/clientCapabilities"]["roots"] == {}


async def test_the_client_names_the_installed_library_version_in_its_handshake() -> None:
    seen: list[Json] = []

    def script(message: Json) -> list[Any] | None:
        seen.append(message)
        return None

    async with asyncio.timeout(20), scripted_session(script) as session:
        assert session.client_info == {"name": "paicli", "version": version("paicli-mcp")}
    [initialize] = [m for m in seen if m.get("method") == "initialize"]
    assert initialize["params"]["clientInfo"] == session.client_info


def test_a_library_that_is_not_installed_still_names_a_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(name: str) -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr("importlib.metadata.version", missing)
    assert _client_info._version() == "0+unknown"
