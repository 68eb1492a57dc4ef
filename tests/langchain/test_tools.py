"""The bridge over real servers (stdio and HTTP): tools made, called sync and async, and the
errors LangChain code relies on (ToolException, TimeoutError, ConnectionError, a restart)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.runnables.retry import RunnableRetry
from langchain_core.tools import ToolException

from paicli.langchain import (
    BridgeError,
    MCPTool,
    ServerUnavailable,
    ToolTimeout,
    load_tools,
)
from paicli.mcp import HttpServer
from tests.conftest import fault_server
from tests.http_servers import run_http_server
from tests.langchain.conftest import TOOL_SERVER, tool_server, tool_server_entry
from tests.processes import gone, until

pytestmark = pytest.mark.real


def from_server(name: str, **options: Any) -> MCPTool:
    return MCPTool.from_executable(
        name=name, executable_path=sys.executable, executable_args=[str(TOOL_SERVER)], **options
    )


def test_from_executable_gives_a_tool_with_the_server_s_schema_and_description() -> None:
    with from_server("echo") as echo:
        assert echo.name == "echo"
        assert echo.description == "Echo the text back."
        schema = echo.tool_call_schema
        assert isinstance(schema, dict)
        assert schema["properties"] == {"text": {"type": "string"}}
        assert echo.invoke({"text": "hi"}) == "hi"
        assert asyncio.run(echo.ainvoke({"text": "async hi"})) == "async hi"


def test_an_explicit_description_replaces_the_server_s() -> None:
    with from_server("echo", description="Say it again.") as echo:
        assert echo.description == "Say it again."


def test_a_script_path_relative_to_the_working_directory_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "tools" / "server.py"
    script.parent.mkdir()
    shutil.copy(TOOL_SERVER, script)
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    with MCPTool.from_executable(name="echo", executable_path="tools/server.py") as echo:
        monkeypatch.chdir("/")  # resolved at creation: a later chdir changes nothing
        assert echo.invoke({"text": "relative"}) == "relative"


def test_from_executable_routes_calls_through_approval_and_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    with from_server("echo", approve=lambda request: False, audit=True) as echo:
        with pytest.raises(ToolException, match="The user denied this tool call"):
            echo.invoke({"text": "hi"})
    (day_file,) = (tmp_path / "home" / "audit").iterdir()
    assert json.loads(day_file.read_text())["decision"] == "denied"


async def test_cancelling_a_call_from_another_loop_cancels_it_on_the_server() -> None:
    # Opened with `with`: the session lives on the private loop thread, not this test's loop.
    with load_tools(fault_server(), include=["sleep", "cancelled_ids"]) as tools:
        sleep, cancelled_ids = sorted(tools, key=lambda t: t.name != "sleep")
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await sleep.ainvoke({"seconds": 30})
        # The fault server answers each call in a thread of its own and records every
        # notifications/cancelled it reads; the notice is sent while this test goes on, so
        # ask until it is there (each ask is a round trip, bounded by the timeout).
        async with asyncio.timeout(10):
            while not json.loads(await cancelled_ids.ainvoke({})):
                pass


async def test_a_synchronous_call_on_the_loop_that_owns_the_tools_is_refused() -> None:
    async with load_tools(tool_server(), include=["echo"]) as (echo,):
        with pytest.raises(BridgeError, match=r"use `await tool.ainvoke\(...\)` there"):
            echo.invoke({"text": "would wait on itself"})


def test_an_unknown_tool_name_lists_the_server_s_tools() -> None:
    with pytest.raises(BridgeError, match=r"has no tool 'nope' \(its tools: crash, "):
        from_server("nope")


def test_the_server_keeps_running_between_calls_and_stops_on_close() -> None:
    pid_tool = from_server("pid")
    first = int(pid_tool.invoke({}))
    assert int(pid_tool.invoke({})) == first
    pid_tool.close()
    assert gone(first)


async def test_load_tools_shares_one_process_per_server_and_stops_it_on_exit() -> None:
    async with load_tools(tool_server()) as tools:
        by_name = {t.name: t for t in tools}
        assert set(by_name) >= {"echo", "fail", "media", "weather", "pid", "sleep"}
        pids = await asyncio.gather(*(by_name["pid"].ainvoke({}) for _ in range(5)))
        assert len(set(pids)) == 1
        assert await by_name["echo"].ainvoke({"text": "x"}) == "x"
    await until(lambda: gone(int(pids[0])))


async def test_tools_opened_in_async_code_also_answer_synchronous_calls() -> None:
    async with load_tools(tool_server(), include=["echo"]) as tools:
        said = await asyncio.to_thread(tools[0].invoke, {"text": "from a thread"})
        assert said == "from a thread"


def test_load_tools_works_from_plain_synchronous_code() -> None:
    with load_tools(tool_server_entry(), exclude=["crash*", "sleep"]) as tools:
        names = {t.name for t in tools}
        assert "crash" not in names and "crash_once" not in names and "sleep" not in names
        echo = next(t for t in tools if t.name == "echo")
        assert echo.invoke({"text": "sync"}) == "sync"
        assert asyncio.run(echo.ainvoke({"text": "another loop"})) == "another loop"


def test_load_tools_reads_every_enabled_server_of_an_mcp_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRIDGE_SCRIPT", str(TOOL_SERVER))
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "one": {"command": sys.executable, "args": ["${BRIDGE_SCRIPT}"]},
                    "off": {"command": "/nonexistent", "disabled": True},
                }
            }
        )
    )
    with load_tools(config, include=["echo"]) as tools:
        assert [(t.name, t.server) for t in tools] == [("echo", "one")]
        assert tools[0].invoke({"text": "from mcp.json"}) == "from mcp.json"


def test_two_servers_offering_one_tool_name_is_refused_naming_both(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    servers = {"a": tool_server_entry(), "b": tool_server_entry()}
    config.write_text(json.dumps({"mcpServers": servers}))
    with pytest.raises(BridgeError, match=r"named 'echo' \(servers 'a' and 'b'\)"):
        load_tools(config).open()


async def test_a_tool_error_result_raises_tool_exception_unless_handled() -> None:
    async with load_tools(tool_server(), include=["fail"]) as (fail,):
        with pytest.raises(ToolException, match="failed: disk full"):
            await fail.ainvoke({"reason": "disk full"})
        fail.handle_tool_error = True
        assert await fail.ainvoke({"reason": "disk full"}) == "failed: disk full"


async def test_a_call_past_its_deadline_raises_a_timeout_error_and_the_session_lives_on() -> None:
    async with load_tools(tool_server(), include=["sleep", "echo"], timeout=0.2) as tools:
        sleep, echo = sorted(tools, key=lambda t: t.name != "sleep")
        with pytest.raises(TimeoutError) as caught:
            await sleep.ainvoke({"seconds": 0.5})
        assert isinstance(caught.value, ToolTimeout)
        assert "timed out after 0.2s" in str(caught.value)
        echo.timeout = 10  # the server answers once its sleep is over
        assert await echo.ainvoke({"text": "still here"}) == "still here"


async def test_a_crash_raises_a_connection_error_and_the_next_call_restarts_the_server() -> None:
    async with load_tools(tool_server(), include=["crash", "pid"]) as tools:
        crash, pid = sorted(tools, key=lambda t: t.name != "crash")
        before = int(await pid.ainvoke({}))
        with pytest.raises(ConnectionError) as caught:
            await crash.ainvoke({})
        assert isinstance(caught.value, ServerUnavailable)
        assert "exit code 3" in str(caught.value)
        after = int(await pid.ainvoke({}))
        assert after != before and gone(before)


async def test_runnable_retry_recovers_from_a_crash(tmp_path: Path) -> None:
    async with load_tools(tool_server(), include=["crash_once"]) as (tool,):
        retrying = RunnableRetry(
            bound=tool,
            retry_exception_types=(TimeoutError, ConnectionError),
            max_attempt_number=2,
            wait_exponential_jitter=False,
        )
        marker = str(tmp_path / "marker")
        assert await retrying.ainvoke({"marker": marker}) == "survived"
        assert (tmp_path / "marker").exists()  # the first attempt did crash


@pytest.mark.usefixtures("short_shutdown_waits")
async def test_runnable_retry_recovers_from_a_hung_server_which_is_restarted(
    tmp_path: Path,
) -> None:
    async with load_tools(tool_server(), include=["hang_once"], timeout=0.5) as (tool,):
        retrying = RunnableRetry(
            bound=tool,
            retry_exception_types=(TimeoutError, ConnectionError),
            max_attempt_number=2,
            wait_exponential_jitter=False,
        )
        marker = tmp_path / "marker"
        assert await retrying.ainvoke({"marker": str(marker)}) == "survived"
        hung = int(marker.read_text())  # the first server, which hung, was stopped
    await until(lambda: gone(hung))


def test_a_server_that_cannot_start_raises_a_connection_error(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text("#!/usr/bin/env python3\nimport sys\nsys.exit(7)\n")
    script.chmod(0o755)
    with pytest.raises(ConnectionError, match="cannot start the server"):
        MCPTool.from_executable(name="echo", executable_path=script)


async def test_images_and_audio_become_content_blocks_and_structure_the_artifact() -> None:
    async with load_tools(tool_server(), include=["media", "weather"]) as tools:
        media, weather = sorted(tools, key=lambda t: t.name != "media")
        blocks = await media.ainvoke({})
        assert blocks == [
            {"type": "text", "text": "a picture and a sound"},
            {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"},
            {"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"},
        ]
        call = {"type": "tool_call", "id": "c1", "name": "weather", "args": {"city": "Oslo"}}
        message = await weather.ainvoke(call)
        assert isinstance(message, ToolMessage)
        assert message.artifact == {"city": "Oslo", "celsius": 21}
        assert json.loads(str(message.content)) == {"city": "Oslo", "celsius": 21}


async def test_closed_tools_refuse_calls_instead_of_restarting_the_server() -> None:
    toolset = load_tools(tool_server(), include=["echo"])
    (echo,) = await toolset.aopen()
    await toolset.aclose()
    with pytest.raises(BridgeError, match="closed"):
        await echo.ainvoke({"text": "late"})


def test_the_private_loop_leaves_no_server_behind_at_exit(tmp_path: Path) -> None:
    program = (
        "import sys\n"
        "from paicli.langchain import MCPTool\n"
        f"tool = MCPTool.from_executable(name='pid', executable_path=sys.executable,"
        f" executable_args=[{str(TOOL_SERVER)!r}])\n"
        "print(tool.invoke({}), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert gone(int(done.stdout.strip()))
    assert os.getpid()  # the test process itself is untouched


async def test_tools_of_an_http_server_share_one_session() -> None:
    async with run_http_server("sdk_http_server.py") as url:
        async with load_tools(HttpServer(url), include=["echo", "add"]) as tools:
            by_name = {t.name: t for t in tools}
            assert await by_name["echo"].ainvoke({"text": "over http"}) == "over http"
            call = {"type": "tool_call", "id": "a", "name": "add", "args": {"a": 2, "b": 3}}
            assert (await by_name["add"].ainvoke(call)).artifact == {"total": 5}


async def test_an_unreachable_http_server_raises_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free, and nothing listens once the probe closes
    with pytest.raises(ConnectionError, match="cannot start the server"):
        await load_tools(HttpServer(f"http://127.0.0.1:{port}/mcp")).aopen()
