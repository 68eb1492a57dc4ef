"""`paicli mcp replay FILE`: a recorded session played back by a stdio server, to paicli and
to the official SDK's client. Real processes: the recording is made against our fault
server, the replay runs as `python -m paicli.cli mcp replay`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.session import ClientSession as SdkSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

from paicli import mcp
from tests import zygote_process
from tests.conftest import fault_server

pytestmark = pytest.mark.real

TIMEOUT = 30


async def record(path: Path) -> list[str]:
    """A session with the fault server, recorded to `path`; the tools it listed."""
    recorder = mcp.TraceRecorder(path)
    with mcp.instrument(recorder):
        async with mcp.connect(fault_server(name="fault")) as session:
            tools = [t.name for t in await session.list_tools()]
            await session.call_tool("echo", {"text": "one"})
            await session.call_tool("echo", {"text": "two"})
            with pytest.raises(mcp.RequestTimeout):
                await session.call_tool("sleep", {"seconds": 30}, timeout=0.2)
    recorder.close()
    return tools


def replay_server(path: Path, *extra: str) -> mcp.StdioServer:
    return mcp.StdioServer(
        sys.executable,
        args=["-m", "paicli.cli", "mcp", "replay", str(path), *extra],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        name="replay",
    )


async def test_paicli_talks_to_a_replay_and_gets_the_recorded_answers(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    async with asyncio.timeout(TIMEOUT):
        tools = await record(path)
        async with mcp.connect(replay_server(path)) as session:
            assert session.server_info.name == "fault-normal"
            assert [t.name for t in await session.list_tools()] == tools
            # Matched by params, so out of the recorded order too.
            assert (await session.call_tool("echo", {"text": "two"})).text == "two"
            assert (await session.call_tool("echo", {"text": "one"})).text == "one"
            # Nothing recorded is left for a third echo: an error that says so.
            with pytest.raises(mcp.RpcError, match="no more 'tools/call echo' requests"):
                await session.call_tool("echo", {"text": "three"})
            # What timed out then gets no answer now either.
            with pytest.raises(mcp.RequestTimeout):
                await session.call_tool("sleep", {"seconds": 30}, timeout=0.5)


async def test_the_official_sdk_client_talks_to_a_replay(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    async with asyncio.timeout(TIMEOUT):
        tools = await record(path)
        server = replay_server(path)
        params = StdioServerParameters(
            command=server.command, args=list(server.args), env=dict(server.env)
        )
        async with (
            stdio_client(params) as (read, write),
            SdkSession(read, write) as session,
        ):
            initialized = await session.initialize()
            assert initialized.server_info.name == "fault-normal"
            listed = await session.list_tools()
            assert [t.name for t in listed.tools] == tools
            result = await session.call_tool("echo", {"text": "one"})
            block = result.content[0]
            assert isinstance(block, TextContent) and block.text == "one"


def run_replay(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return zygote_process.run(
        [sys.executable, "-m", "paicli.cli", "mcp", "replay", str(path), *extra],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_trace_of_several_servers_needs_one_chosen(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    base = {"t": 1.0, "conn": "a.1", "dir": "event", "era": None, "event": "open"}
    path.write_text("".join(json.dumps({**base, "server": s}) + "\n" for s in ("a", "b")))
    done = run_replay(path)
    assert done.returncode == 2
    assert "the trace holds a, b: choose one with --server" in done.stderr
    assert run_replay(path, "--server", "b").returncode == 0
    missing = run_replay(path, "--server", "c")
    assert missing.returncode == 2 and "no server 'c'" in missing.stderr
    gone = run_replay(tmp_path / "nothing.jsonl")
    assert gone.returncode == 1 and "nothing.jsonl: cannot read: no such file" in gone.stderr
