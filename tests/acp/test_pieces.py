"""The pieces of `paicli acp` that need no process: how hostile lines are told apart, how a
turn's end becomes a stop reason, what a prompt becomes, which events an editor sees, and the
editor's MCP servers as config entries."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import RequestError, image_block, resource_link_block, text_block
from acp.schema import (
    AcpMcpServer,
    AgentMessageChunk,
    AgentThoughtChunk,
    EmbeddedResourceContentBlock,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
    TextResourceContents,
    ToolCallStart,
)

from paicli.acp.editor_servers import with_editor_servers
from paicli.acp.prompt_text import prompt_text
from paicli.acp.session import TurnFailed, stop_reason
from paicli.acp.updates import event_updates
from paicli.acp.wire import MAX_LINE, StdioChannel, _shape_problem
from paicli.agent.events import Notice, SubAgentEvent, TextDelta, ToolStarted, TurnEnded
from paicli.run_settings import StartOptions, load_run_settings


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ([1, 2], "a message must be a JSON object"),
        ("text", "a message must be a JSON object"),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, '"method" must be a string'),
        ({"jsonrpc": "2.0", "id": [1], "method": "x"}, '"id" must be a number or a string'),
        ({"jsonrpc": "2.0", "method": "x", "params": 5}, '"params" must be an object'),
        ({"jsonrpc": "2.0", "id": 3}, 'neither a request (no "method") nor a response'),
        ({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {}}, None),
        ({"jsonrpc": "2.0", "id": 3, "result": {}}, None),
    ],
)
def test_lines_that_cannot_be_routed_are_told_apart(message: object, problem: str | None) -> None:
    assert _shape_problem(message) == problem


class Written(asyncio.WriteTransport):
    """The bytes the channel writes to the editor."""

    def __init__(self) -> None:
        super().__init__()
        self.data = bytearray()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.data += data

    def is_closing(self) -> bool:
        return False


@pytest.mark.parametrize("then", [b"\n" + b'{"jsonrpc": "2.0", "id": 2, "method": "x"}\n', b""])
async def test_a_line_over_the_limit_is_answered_and_skipped_whole(then: bytes) -> None:
    """A line longer than `MAX_LINE`, arriving in pieces (then a request, or the end of
    input): one -32600 answer, none of its bytes read as a message, and the next line is."""
    reader = asyncio.StreamReader(limit=MAX_LINE)  # as `StdioChannel.open` makes it
    written = Written()
    channel = StdioChannel(reader, written)
    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"t": "' + b"{" * MAX_LINE
    for start in range(0, len(huge), MAX_LINE // 3):
        reader.feed_data(huge[start : start + MAX_LINE // 3])
    reader.feed_data(then)
    reader.feed_eof()
    async with asyncio.timeout(10):
        received = [await channel.receive(), await channel.receive()]
    assert received == (
        [{"jsonrpc": "2.0", "id": 2, "method": "x"}, None] if then else [None, None]
    )
    error = {"code": -32600, "message": f"Invalid Request: over {MAX_LINE} bytes"}
    assert json.loads(written.data) == {"jsonrpc": "2.0", "id": None, "error": error}


def test_a_turn_s_end_becomes_acp_s_stop_reason() -> None:
    def same(text: str) -> str:
        return text

    assert stop_reason(TurnEnded("done"), "stop", same) == "end_turn"
    assert stop_reason(TurnEnded("done"), "length", same) == "max_tokens"
    assert stop_reason(TurnEnded("done"), "content_filter", same) == "refusal"
    assert stop_reason(TurnEnded("step_budget"), None, same) == "max_turn_requests"
    assert stop_reason(TurnEnded("cancelled"), None, same) == "cancelled"
    assert stop_reason(None, None, same) == "cancelled"
    with pytest.raises(TurnFailed, match="HIDDEN"):
        stop_reason(TurnEnded("error", error="key sk-1"), None, lambda t: "HIDDEN")


def test_a_prompt_becomes_one_turn_of_text_and_refuses_what_was_not_offered() -> None:
    embedded = EmbeddedResourceContentBlock(
        type="resource",
        resource=TextResourceContents(uri="file:///a.py", text="x = 1\n</resource>\n"),
    )
    text = prompt_text(
        [text_block("look at"), resource_link_block("a.py", "file:///a.py"), embedded]
    )
    assert text.startswith("look at\n@file:///a.py\n<resource-2 ")
    assert text.endswith("</resource>\n\n</resource-2>")
    with pytest.raises(RequestError):
        prompt_text([image_block("AAAA", "image/png")])
    with pytest.raises(RequestError):
        prompt_text([text_block("   ")])


def test_an_editor_sees_text_notices_and_a_sub_agent_s_tools_but_not_its_words() -> None:
    root = Path("/project")
    (chunk,) = event_updates(TextDelta("hi sk-1"), root, lambda t: t.replace("sk-1", "***"))
    assert isinstance(chunk, AgentMessageChunk) and chunk.content.text == "hi ***"
    (notice,) = event_updates(Notice("context trimmed"), root, str)
    assert isinstance(notice, AgentThoughtChunk)
    assert event_updates(SubAgentEvent("c1", "helper", TextDelta("inner")), root, str) == []
    started = ToolStarted("c2", "read_file", {"path": "a.txt"})
    (call,) = event_updates(SubAgentEvent("c1", "helper", started), root, str)
    assert isinstance(call, ToolCallStart) and call.kind == "read"
    assert call.locations is not None and call.locations[0].path == "/project/a.txt"


def test_editor_servers_join_the_config_as_the_user_s_own(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path / "home"), "PAICLI_HOME": str(tmp_path / "home/.paicli")}
    settings = load_run_settings(tmp_path, StartOptions(), environ)
    servers = [
        McpServerStdio(
            name="tools",
            command="/bin/true",
            args=["--x"],
            env=[EnvVariable(name="TOKEN", value="secret-value-123")],
        ),
        HttpMcpServer(
            type="http",
            name="remote",
            url="http://127.0.0.1:1/mcp",
            headers=[HttpHeader(name="Authorization", value="Bearer tok-456")],
        ),
        SseMcpServer(type="sse", name="old", url="http://127.0.0.1:1/sse", headers=[]),
        AcpMcpServer(type="acp", name="inner", server_id="x"),
        McpServerStdio(name="bad name/../x", command="/bin/true", args=[], env=[]),
    ]
    joined = with_editor_servers(settings, servers)
    entries = joined.config.servers
    assert entries["tools"].scope == "cli" and entries["tools"].error is None
    assert entries["remote"].error is None
    assert entries["old"].error is None and entries["old"].raw["type"] == "sse"
    assert "inner" not in entries and "bad name/../x" not in entries
    assert {"secret-value-123", "Bearer tok-456"} <= set(joined.secrets)
    problems = " ".join(joined.problems)
    assert "'inner': acp is not supported" in problems and "refused" in problems
