"""The repository's example MCP servers (examples/servers), driven by paicli's own client.

Each test starts the real server as a subprocess with the running interpreter; the last one
checks that the repository's `.paicli/mcp.json` points paicli at them.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from paicli.home import PaicliHome
from paicli.mcp import (
    ClientSession,
    Progress,
    RpcError,
    StdioServer,
    TextContent,
    TextResourceContents,
    connect,
)
from paicli.mcp._stderr import StderrTail
from paicli.servers.config import LoadedConfig, load_config
from tests.conftest import REPO, Inbox
from tests.processes import server_process

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

EXAMPLES = REPO / "examples" / "servers"
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# Generous: a cold interpreter start on a loaded CI machine, never a real wait.
TIMEOUT = 30


def example(name: str, **options: Any) -> StdioServer:
    """The example server `name`, run by the interpreter running the tests."""
    return StdioServer(sys.executable, args=[str(EXAMPLES / f"{name}.py")], name=name, **options)


@pytest.fixture
def stderr_fed(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Set each time a server's stderr delivers bytes. stderr is a pipe of its own that the
    client offers no event for, so the stdio transport's stderr tail is observed."""
    fed = asyncio.Event()
    feed = StderrTail.feed

    def observed(tail: StderrTail, data: bytes) -> None:
        feed(tail, data)
        fed.set()

    monkeypatch.setattr(StderrTail, "feed", observed)
    return fed


async def stderr_line(session: ClientSession, text: str, fed: asyncio.Event) -> str:
    """Wait until the server has written a stderr line containing `text`."""
    while True:
        fed.clear()
        for line in server_process(session).stderr_lines():
            if text in line:
                return line
        await fed.wait()


# -- handshake ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
async def test_each_server_accepts_every_handshake_version(version: str) -> None:
    for name in ("notes", "timer"):
        async with asyncio.timeout(TIMEOUT), connect(example(name, protocol=version)) as session:
            assert session.protocol_version == version
            assert session.server_info.name == f"paicli-example-{name}"


async def test_a_server_probed_with_server_discover_falls_back_to_the_handshake() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("notes")) as session:
        assert session.era == "legacy"
        assert session.protocol_version == "2025-11-25"
        assert session.server_capabilities["resources"] == {"listChanged": True}
        await session.ping()


async def test_an_unsupported_protocol_version_is_answered_with_the_latest() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLES / "timer.py"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    request["params"] = {"protocolVersion": "1999-01-01", "capabilities": {}}
    process.stdin.write(json.dumps(request).encode() + b"\n")
    async with asyncio.timeout(TIMEOUT):
        reply = json.loads(await process.stdout.readline())
        process.stdin.close()
        # Only protocol messages on stdout: after the reply comes end of file.
        assert await process.stdout.read() == b""
        assert await process.wait() == 0
    assert reply["id"] == 1
    assert reply["result"]["protocolVersion"] == "2025-11-25"


async def test_unknown_methods_and_bad_params_are_protocol_errors() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("notes")) as session:
        with pytest.raises(RpcError) as unknown:
            await session.request("notes/teleport", {})
        with pytest.raises(RpcError) as no_uri:
            await session.request("resources/read", {})
        with pytest.raises(RpcError) as no_tool:
            await session.call_tool("no_such_tool")
    assert unknown.value.code == -32601
    assert no_uri.value.code == -32602
    assert no_tool.value.code == -32602


# -- notes -------------------------------------------------------------------------------


async def test_notes_lists_its_tools_with_schemas_and_read_only_hints() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("notes")) as session:
        tools = {tool.name: tool for tool in await session.list_tools()}
    assert set(tools) == {"add_note", "list_notes", "read_note", "delete_note"}
    assert tools["add_note"].input_schema["required"] == ["title", "text"]
    assert tools["read_note"].input_schema["properties"]["title"]["type"] == "string"
    read_only = {
        name for name, tool in tools.items() if (tool.annotations or {}).get("readOnlyHint")
    }
    assert read_only == {"list_notes", "read_note"}


async def test_notes_tools_add_list_read_and_delete_a_note() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("notes")) as session:
        added = await session.call_tool("add_note", {"title": "plan", "text": "ship it"})
        listed = await session.call_tool("list_notes")
        read = await session.call_tool("read_note", {"title": "plan"})
        deleted = await session.call_tool("delete_note", {"title": "plan"})
        gone = await session.call_tool("read_note", {"title": "plan"})
    assert not added.is_error and "plan" in added.text
    assert "- plan" in listed.text.splitlines()
    assert (read.is_error, read.text) == (False, "ship it")
    assert not deleted.is_error
    assert gone.is_error and "no note titled 'plan'" in gone.text


async def test_bad_tool_arguments_come_back_as_tool_errors() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("notes")) as session:
        missing = await session.call_tool("add_note", {"title": "x"})
        wrong_type = await session.call_tool("read_note", {"title": 3})
        reserved = await session.call_tool("add_note", {"title": "readme", "text": "x"})
    assert missing.is_error and "'text'" in missing.text
    assert wrong_type.is_error and "string" in wrong_type.text
    assert reserved.is_error


async def test_adding_a_note_adds_a_resource_and_announces_the_change() -> None:
    inbox = Inbox()
    async with asyncio.timeout(TIMEOUT), connect(example("notes")) as session:
        session.subscribe(inbox)
        before = {resource.uri for resource in await session.list_resources()}
        await session.call_tool("add_note", {"title": "to do/today", "text": "write tests"})
        await inbox.wait_for(lambda note: note.method == "notifications/resources/list_changed")
        after = {resource.uri for resource in await session.list_resources()}
        read = await session.read_resource("note://to%20do%2Ftoday")
    assert "note://readme" in before
    assert len(before) >= 2  # the readme and at least one sample note
    assert after - before == {"note://to%20do%2Ftoday"}
    assert read.contents == [
        TextResourceContents(read.contents[0].uri, "write tests", "text/plain")
    ]


async def test_the_readme_resource_describes_the_server() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("notes")) as session:
        readme = await session.read_resource("note://readme")
        with pytest.raises(RpcError) as missing:
            await session.read_resource("note://nothing-here")
    content = readme.contents[0]
    assert isinstance(content, TextResourceContents)
    assert "add_note" in content.text and "summarize_notes" in content.text
    assert missing.value.code == -32002


async def test_summarize_notes_prompt_includes_every_note() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("notes")) as session:
        prompts = await session.list_prompts()
        await session.call_tool("add_note", {"title": "ideas", "text": "a faster client"})
        result = await session.get_prompt("summarize_notes", {"focus": "speed"})
        with pytest.raises(RpcError) as unknown:
            await session.get_prompt("no_such_prompt")
    assert [prompt.name for prompt in prompts] == ["summarize_notes"]
    content = result.messages[0].content
    assert isinstance(content, TextContent)
    assert "## ideas\na faster client" in content.text
    assert "concentrating on speed" in content.text
    assert unknown.value.code == -32602


# -- timer -------------------------------------------------------------------------------


async def test_timer_tells_the_time_and_counts_down() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("timer")) as session:
        tools = {tool.name: tool for tool in await session.list_tools()}
        now = await session.call_tool("now")
        countdown = await session.call_tool("countdown", {"n": 3})
    assert set(tools) == {"now", "sleep", "countdown"}
    assert tools["now"].annotations == {"readOnlyHint": True}
    assert tools["sleep"].input_schema["properties"]["seconds"]["maximum"] == 600
    assert datetime.fromisoformat(now.text).tzinfo is not None
    assert countdown.text.splitlines() == ["3", "2", "1"]


async def test_sleep_reports_progress_every_second() -> None:
    updates: list[Progress] = []
    async with asyncio.timeout(TIMEOUT), connect(example("timer")) as session:
        result = await session.call_tool("sleep", {"seconds": 1.5}, on_progress=updates.append)
    assert (result.is_error, result.text) == (False, "Slept 1.5 seconds.")
    # One report a second and one at the end (a stalled machine may merge the two).
    assert 1 <= len(updates) <= 2
    assert [update.progress for update in updates] == sorted({u.progress for u in updates})
    assert updates[-1].progress == 1.5
    assert all(update.total == 1.5 for update in updates)


async def test_sleep_rejects_seconds_out_of_range() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("timer")) as session:
        result = await session.call_tool("sleep", {"seconds": 601})
    assert result.is_error and "between 0 and 600" in result.text


async def test_cancelling_sleep_reaches_the_server_which_keeps_answering(
    stderr_fed: asyncio.Event,
) -> None:
    first_progress = asyncio.Event()
    async with asyncio.timeout(TIMEOUT), connect(example("timer")) as session:
        sleeping = asyncio.ensure_future(
            session.call_tool(
                "sleep", {"seconds": 30}, on_progress=lambda _update: first_progress.set()
            )
        )
        await first_progress.wait()
        sleeping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sleeping
        line = await stderr_line(session, "cancelled request", stderr_fed)
        now = await session.call_tool("now")
    assert line.startswith("cancelled request ")
    assert not now.is_error


async def test_calls_are_answered_while_a_sleep_runs() -> None:
    async with asyncio.timeout(TIMEOUT), connect(example("timer")) as session:
        sleeping = asyncio.ensure_future(session.call_tool("sleep", {"seconds": 30}))
        try:
            countdown = await session.call_tool("countdown", {"n": 1})
            assert not sleeping.done()
        finally:
            sleeping.cancel()
            with pytest.raises(asyncio.CancelledError):
                await sleeping
    assert countdown.text == "1"


# -- configuration ---------------------------------------------------------------------------


def repository_config(tmp_path: Path) -> LoadedConfig:
    """The repository's config as paicli loads it, with an empty user config."""
    environ = {"HOME": str(tmp_path), "PAICLI_HOME": str(tmp_path / ".paicli")}
    return load_config(REPO, home=PaicliHome(tmp_path / ".paicli"), environ=environ)


def test_the_repository_config_points_at_both_example_servers(tmp_path: Path) -> None:
    config = repository_config(tmp_path)
    assert not config.errors
    for name in ("notes", "timer"):
        entry = config.servers[name]
        assert entry.scope == "project"
        assert isinstance(entry.spec, StdioServer)
        assert entry.spec.command == "python3"
        script = Path(entry.spec.args[0])
        assert script == EXAMPLES / f"{name}.py"
        assert script.is_file()


async def test_the_servers_of_the_repository_config_start(tmp_path: Path) -> None:
    servers = repository_config(tmp_path).servers
    for name in ("notes", "timer"):
        entry = servers[name]
        assert isinstance(entry.spec, StdioServer)
        # The interpreter running the tests stands in for whatever python3 is on PATH.
        server = StdioServer(sys.executable, args=entry.spec.args, name=name)
        async with asyncio.timeout(TIMEOUT), connect(server) as session:
            assert await session.list_tools()
