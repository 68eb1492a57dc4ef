"""The minimal JSON-RPC dialect of hand-written tools, in memory: how it is recognised, that
such a tool is sent tool calls and nothing else, and how its answers become tool results.

The scripted server plays the tool: it answers the first message, whatever its method, with
the dialect's handshake, and records every message it is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from paicli.mcp import (
    ClientSession,
    EraCache,
    MemoryTransport,
    ProtocolError,
    RequestTimeout,
    TextContent,
    Timeouts,
)
from paicli.mcp._versions import ProtocolChoice
from tests.scripted_server import Json, result, serve

TOOLS: list[Any] = [
    {
        "name": "echo",
        "description": "Return the text.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {"name": "bare"},
]
HANDSHAKE: Json = {
    "server_info": {"name": "tiny", "version": "0.1"},
    "capabilities": {"tools": TOOLS},
}


class MinimalTool:
    """A script for `serve`: the minimal dialect, and the log of what it was sent."""

    def __init__(self, handshake: Json | None = None, *, silent: tuple[str, ...] = ()) -> None:
        self.handshake = HANDSHAKE if handshake is None else handshake
        self.silent = silent  # methods never answered
        self.sent: list[Json] = []

    @property
    def methods(self) -> list[str]:
        return [m.get("method", "?") for m in self.sent]

    def __call__(self, message: Json) -> list[Any]:
        self.sent.append(message)
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message or method in self.silent:
            return []
        if len(self.sent) == 1:
            return [result(message, self.handshake)]
        answers: dict[str, Any] = {
            "echo": params.get("text"),
            "object": {"n": 1, "words": ["a", "b"]},
            "list": [1, "two"],
            "nothing": None,
        }
        if method in answers:
            return [result(message, answers[method])]
        error = {"code": -32601, "message": f"no tool named {method}"}
        return [{"jsonrpc": "2.0", "id": message["id"], "error": error}]


@contextlib.asynccontextmanager
async def minimal_session(
    tool: MinimalTool,
    *,
    protocol: ProtocolChoice = "auto",
    cache: EraCache | None = None,
    **timeouts: float,
) -> AsyncIterator[ClientSession]:
    client, server = MemoryTransport.pair()
    task = asyncio.ensure_future(serve(server, tool))
    try:
        async with ClientSession(
            client,
            name="tiny",
            protocol=protocol,
            timeouts=Timeouts(timeouts.get("handshake", 10.0), timeouts.get("request", 10.0)),
            era_cache=cache,
            identity=("tiny",) if cache is not None else None,
        ) as session:
            yield session
    finally:
        await server.aclose()
        await task


async def test_the_answer_to_the_probe_is_recognised_as_a_minimal_handshake() -> None:
    tool = MinimalTool()
    async with asyncio.timeout(10), minimal_session(tool) as session:
        assert session.dialect == "minimal"
        assert session.protocol_version == "minimal"
        assert session.server_info.name == "tiny" and session.server_info.version == "0.1"
        tools = await session.list_tools()
    assert [t.name for t in tools] == ["echo", "bare"]
    assert tools[0].input_schema["properties"] == {"text": {"type": "string"}}
    assert tools[0].description == "Return the text."
    assert tools[1].input_schema == {"type": "object"}  # none given: any object
    assert tool.methods == ["server/discover"]  # the list came with the handshake


async def test_calls_are_sent_as_the_tool_name_with_the_arguments_and_nothing_else() -> None:
    tool = MinimalTool()
    async with asyncio.timeout(10), minimal_session(tool) as session:
        called = await session.call_tool("echo", {"text": "hi"})
        await session.ping()
        await session.set_logging_level("debug")
        await session.notify("notifications/roots/list_changed")
        assert await session.list_resources() == []
        assert await session.list_resource_templates() == []
        assert await session.list_prompts() == []
        await session.call_tool("echo", {"text": "again"})
    assert called.text == "hi" and not called.is_error
    assert tool.methods == ["server/discover", "echo", "echo"]
    assert tool.sent[1] == {"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"text": "hi"}}


async def test_results_of_any_json_type_become_text_and_structured_content() -> None:
    async with asyncio.timeout(10), minimal_session(MinimalTool()) as session:
        obj = await session.call_tool("object")
        lst = await session.call_tool("list")
        nothing = await session.call_tool("nothing")
    assert obj.structured_content == {"n": 1, "words": ["a", "b"]}
    assert obj.content == [TextContent('{"n": 1, "words": ["a", "b"]}')]
    assert lst.structured_content == [1, "two"] and lst.text == '[1, "two"]'
    assert nothing.text == "null" and nothing.structured_content is None


async def test_an_error_answer_is_a_tool_error_with_its_message() -> None:
    async with asyncio.timeout(10), minimal_session(MinimalTool()) as session:
        failed = await session.call_tool("missing", {})
    assert failed.is_error and failed.text == "no tool named missing"


async def test_a_timed_out_call_fails_without_a_cancellation_notice() -> None:
    tool = MinimalTool(silent=("hang",))
    async with asyncio.timeout(10), minimal_session(tool) as session:
        with pytest.raises(RequestTimeout):
            await session.call_tool("hang", timeout=0.05)
        assert (await session.call_tool("echo", {"text": "still here"})).text == "still here"
    assert tool.methods == ["server/discover", "hang", "echo"]


async def test_requests_outside_tool_calls_are_refused_before_they_reach_the_tool() -> None:
    tool = MinimalTool()
    async with asyncio.timeout(10), minimal_session(tool) as session:
        with pytest.raises(ProtocolError, match="minimal JSON-RPC dialect"):
            await session.read_resource("file:///etc/passwd")
        with pytest.raises(ProtocolError, match="minimal JSON-RPC dialect"):
            await session.get_prompt("any")
    assert tool.methods == ["server/discover"]


async def test_a_pinned_handshake_answered_in_the_minimal_dialect_gets_no_initialized_notice() -> (
    None
):
    tool = MinimalTool()
    async with asyncio.timeout(10), minimal_session(tool, protocol="2025-06-18") as session:
        assert session.dialect == "minimal"
        await session.call_tool("echo", {"text": "x"})
    assert tool.methods == ["initialize", "echo"]


async def test_the_verdict_is_cached_and_the_next_connection_sends_one_handshake() -> None:
    cache = EraCache()
    async with asyncio.timeout(10), minimal_session(MinimalTool(), cache=cache):
        pass
    assert cache.get(("tiny",)) == "minimal"
    again = MinimalTool()
    async with asyncio.timeout(10), minimal_session(again, cache=cache) as session:
        assert session.dialect == "minimal"
    assert again.methods == ["initialize"]


async def test_a_late_answer_to_the_probe_still_decides_over_the_handshake_sent_after_it() -> None:
    """A tool slow to answer its first line: the probe is given up on and `initialize` sent,
    then the probe's minimal answer arrives first and wins."""
    sent: list[Json] = []

    def slow_tool(message: Json) -> list[Any]:
        sent.append(message)
        if message.get("method") == "initialize":
            # Only now the answer to the first line (the probe), then the tool takes
            # `initialize` for a call of an unknown tool.
            error = {"code": -32601, "message": "no tool named initialize"}
            return [
                result(sent[0], HANDSHAKE),
                {"jsonrpc": "2.0", "id": message["id"], "error": error},
            ]
        return []

    client, server = MemoryTransport.pair()
    task = asyncio.ensure_future(serve(server, slow_tool))
    try:
        async with (
            asyncio.timeout(10),
            ClientSession(client, name="slow", timeouts=Timeouts(1.0, 5.0)) as session,
        ):
            assert session.dialect == "minimal"
            assert [t.name for t in await session.list_tools()] == ["echo", "bare"]
    finally:
        await server.aclose()
        await task
    assert [m.get("method") for m in sent] == ["server/discover", "initialize"]


@pytest.mark.parametrize(
    "answer",
    [
        {"protocolVersion": "2025-11-25", "capabilities": {"tools": []}, "serverInfo": {}},
        {"capabilities": {"tools": {"listChanged": True}}, "server_info": {}},
        {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": []}},
    ],
)
async def test_mcp_shaped_answers_are_not_taken_for_the_minimal_dialect(answer: Json) -> None:
    tool = MinimalTool(answer)
    try:
        async with asyncio.timeout(10), minimal_session(tool, protocol="2025-11-25") as session:
            dialect = session.dialect
    except ProtocolError:
        dialect = "mcp"  # refused as a broken MCP handshake, not taken for the dialect
    assert dialect == "mcp"


async def test_hostile_tool_lists_are_bounded_and_nameless_entries_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entries: list[Any] = [{"name": f"t{i}"} for i in range(10_050)]
    entries[:3] = [7, {"description": "no name"}, {"name": ""}]
    handshake = {"server_info": "not an object", "capabilities": {"tools": entries}}
    async with asyncio.timeout(20), minimal_session(MinimalTool(handshake)) as session:
        tools = await session.list_tools()
        assert session.server_info.name == "unknown"
    assert len(tools) == 10_000 - 3 and tools[0].name == "t3"
    assert "skipping a tool without a name" in caplog.text
    assert "keeping 10000" in caplog.text
