"""Real tools in the minimal JSON-RPC dialect, in Python, C (compiled here with `cc`) and POSIX
shell, run as subprocesses: each is recognised, called, and sent nothing it does not expect,
including a tool that exits on any unexpected message and one that never answers them; a
tool stuck in a timed-out call is restarted.

What a tool is sent is read off a recording `TransportWrapper` (the public seam); a tool that
crashes on an unexpected message also proves it by still answering afterwards.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp import (
    ClientSession,
    EraCache,
    RequestTimeout,
    StdioTransport,
    Timeouts,
    TransportWrapper,
    connect,
)
from tests.conftest import SERVER_PROGRAMS
from tests.processes import gone, server_process

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

# Generous: a cold interpreter start on a loaded machine, never a real wait.
TIMEOUT = 30
PYTHON_TOOL = [sys.executable, str(SERVER_PROGRAMS / "minimal_tool.py")]
SHELL_TOOL = ["/bin/sh", str(SERVER_PROGRAMS / "minimal_tool.sh")]


class Recording(TransportWrapper):
    """Keeps every message the client sends."""

    def __init__(self, inner: StdioTransport) -> None:
        super().__init__(inner)
        self.sent: list[dict[str, Any]] = []
        self.answered = asyncio.Event()  # set by each message from the tool

    def observe_incoming(self, message: dict[str, Any]) -> None:
        self.answered.set()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        await super().send(message)

    @property
    def methods(self) -> list[str]:
        return [m.get("method", "(answer)") for m in self.sent]


@asynccontextmanager
async def recorded(
    argv: list[str], *, request_timeout: float = 20.0, cache: EraCache | None = None
) -> AsyncIterator[tuple[ClientSession, Recording]]:
    transport = Recording(await StdioTransport.start(argv[0], argv[1:]))
    session = ClientSession(
        transport,
        name="tool",
        timeouts=Timeouts(20.0, request_timeout),
        era_cache=cache,
        identity=tuple(argv) if cache is not None else None,
    )
    async with session:
        transport.answered.clear()  # from here on: answers after the handshake
        yield session, transport


@pytest.fixture(scope="module")
def c_tool(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The C tool, compiled with the machine's C compiler."""
    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler (cc) on this machine")
    binary = tmp_path_factory.mktemp("c-tool") / "minimal_tool"
    subprocess.run(
        [compiler, "-O2", "-o", str(binary), str(SERVER_PROGRAMS / "minimal_tool.c")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return [str(binary)]


async def test_a_python_tool_is_recognised_and_called() -> None:
    async with asyncio.timeout(TIMEOUT), recorded(PYTHON_TOOL) as (session, wire):
        assert session.dialect == "minimal"
        assert session.server_info.name == "minimal-python"
        tools = {t.name: t for t in await session.list_tools()}
        assert tools["echo"].input_schema["required"] == ["text"]
        assert (await session.call_tool("echo", {"text": "héllo"})).text == "héllo"
        stats = await session.call_tool("stats", {"text": "a b c"})
        failed = await session.call_tool("fail")
    assert stats.structured_content == {"length": 5, "words": ["a", "b", "c"]}
    assert failed.is_error and failed.text == "this tool always fails"
    assert wire.methods == ["server/discover", "echo", "stats", "fail"]


async def test_a_c_tool_that_never_answers_unknown_methods_works(c_tool: list[str]) -> None:
    async with asyncio.timeout(TIMEOUT), recorded(c_tool) as (session, wire):
        assert session.dialect == "minimal"
        assert [t.name for t in await session.list_tools()] == ["echo", "add"]
        echoed = await session.call_tool("echo", {"text": 'say "hi"'})
        added = await session.call_tool("add", {"a": 1.5, "b": 2})
        await session.ping()
    assert echoed.text == 'say "hi"'
    assert added.structured_content == 3.5 and added.text == "3.5"
    assert wire.methods == ["server/discover", "echo", "add"]


async def test_a_shell_tool_that_exits_on_anything_unexpected_survives_a_session() -> None:
    async with asyncio.timeout(TIMEOUT), recorded(SHELL_TOOL) as (session, wire):
        assert session.dialect == "minimal"
        assert (await session.call_tool("upper", {"text": "quiet"})).text == "QUIET"
        await session.ping()
        await session.set_logging_level("info")
        assert await session.list_prompts() == []
        assert (await session.call_tool("upper", {"text": "still"})).text == "STILL"
        assert session.closed is None
    assert wire.methods == ["server/discover", "upper", "upper"]


async def test_a_slow_starting_tool_is_sent_one_handshake_only() -> None:
    """The tool reads nothing for longer than the probe waits for an answer; it crashes on a
    second handshake, so it would not survive being taken for a server that ignores the probe."""
    argv = [*PYTHON_TOOL, "--start-delay", "1.5", "--crash-on-unexpected"]
    async with asyncio.timeout(TIMEOUT), recorded(argv) as (session, wire):
        assert session.dialect == "minimal"
        assert (await session.call_tool("echo", {"text": "up"})).text == "up"
    assert wire.methods == ["server/discover", "echo"]


async def test_a_tool_slow_to_answer_its_first_line_is_still_recognised() -> None:
    """It reads the probe at once but answers after the probe's wait; `initialize` has gone
    out by then, which it answers as an unknown tool: the probe's answer still decides."""
    argv = [*PYTHON_TOOL, "--first-answer-delay", "1.0"]
    async with asyncio.timeout(TIMEOUT), recorded(argv) as (session, wire):
        assert session.dialect == "minimal"
        assert (await session.call_tool("echo", {"text": "ok"})).text == "ok"
    assert wire.methods == ["server/discover", "initialize", "echo"]


async def test_a_tool_that_answers_a_timed_out_call_late_is_kept_and_not_cancelled() -> None:
    argv = [*PYTHON_TOOL, "--crash-on-unexpected"]
    async with asyncio.timeout(TIMEOUT), recorded(argv) as (session, wire):
        pid = server_process(session).pid
        with pytest.raises(RequestTimeout):
            await session.call_tool("sleep", {"seconds": 0.5}, timeout=0.1)
        await wire.answered.wait()  # the late answer to the sleep (dropped by the session)
        assert (await session.call_tool("echo", {"text": "after"})).text == "after"
        assert session.closed is None and server_process(session).pid == pid
    assert wire.methods == ["server/discover", "sleep", "echo"]


@pytest.mark.usefixtures("short_shutdown_waits")
async def test_a_tool_silent_since_a_call_timed_out_is_restarted_before_the_next_call() -> None:
    argv = [*PYTHON_TOOL, "--crash-on-unexpected"]
    async with asyncio.timeout(TIMEOUT), recorded(argv) as (session, wire):
        stuck = server_process(session).pid
        assert stuck is not None
        with pytest.raises(RequestTimeout):
            await session.call_tool("sleep", {"seconds": 600}, timeout=0.2)
        # The new process gets one handshake line, then the call.
        assert (await session.call_tool("echo", {"text": "fresh"})).text == "fresh"
        assert server_process(session).pid != stuck and session.closed is None
        assert (await session.call_tool("echo", {"text": "again"})).text == "again"
    assert wire.methods == ["server/discover", "sleep", "initialize", "echo", "echo"]
    assert gone(stuck)  # stopped by the restart, reaped by the time the session closed


async def test_the_verdict_is_remembered_and_the_next_start_skips_the_probe() -> None:
    cache = EraCache()
    argv = [*PYTHON_TOOL, "--crash-on-unexpected"]
    async with asyncio.timeout(TIMEOUT), recorded(argv, cache=cache) as (session, first):
        assert session.dialect == "minimal"
    assert cache.get(tuple(argv)) == "minimal"
    async with asyncio.timeout(TIMEOUT), recorded(argv, cache=cache) as (session, second):
        assert (await session.call_tool("echo", {"text": "x"})).text == "x"
    assert first.methods == ["server/discover"]
    assert second.methods == ["initialize", "echo"]


async def test_connect_reaches_a_minimal_tool_from_a_config_entry() -> None:
    entry = {"command": PYTHON_TOOL[0], "args": [*PYTHON_TOOL[1:], "--crash-on-unexpected"]}
    async with asyncio.timeout(TIMEOUT), connect(entry, name="tool") as session:
        assert session.dialect == "minimal" and session.era == "legacy"
        assert (await session.call_tool("echo", {"text": "x"})).text == "x"


def test_the_c_tool_builds_without_warnings(tmp_path: Path) -> None:
    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler (cc) on this machine")
    built = subprocess.run(
        [
            compiler,
            "-Wall",
            "-Wextra",
            "-o",
            str(tmp_path / "t"),
            str(SERVER_PROGRAMS / "minimal_tool.c"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0 and built.stderr == ""


async def test_a_closed_transport_is_not_restarted() -> None:
    transport = await StdioTransport.start(PYTHON_TOOL[0], PYTHON_TOOL[1:])
    pid = transport.pid
    async with asyncio.timeout(TIMEOUT):
        await transport.aclose()
        assert not await transport.restart()
    assert transport.pid == pid and gone(pid)


async def test_an_answer_nested_deeper_than_can_be_shown_is_a_tool_error() -> None:
    async with asyncio.timeout(TIMEOUT), recorded(PYTHON_TOOL) as (session, _):
        deep = await session.call_tool("deep", {"depth": 1010})
        shallow = await session.call_tool("deep", {"depth": 3})
    assert deep.is_error and "nested too deeply" in deep.text
    assert shallow.structured_content == [[[]]]
