"""A stdio server dies with the process that started it through the library, however that
process ends: killed with SIGKILL, nothing of the server is left within 2 s, its own
children included (the lifeline kills its process group), with or without util-linux's
setpriv (else the parent-death signal is set in a preexec function); and the direct child
dies by the parent-death signal alone when the lifeline helper is gone too. Real processes:
a parent that connects to the fault server (which ignores SIGTERM and starts a child that
ignores it too), then waits to be killed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tests.conftest import SERVER_PROGRAMS
from tests.processes import alive, parent_of, processes_with, until

pytestmark = pytest.mark.real

PARENT = f"""
import asyncio, json, os, sys, time
from paicli.mcp import StdioServer, connect

async def main():
    spec = StdioServer(sys.executable, [{str(SERVER_PROGRAMS / "fault_server.py")!r},
                                        "--mode", "ignore_sigterm"])
    async with connect(spec) as session:
        result = await session.call_tool("pids", {{}})
        if "--fork" in sys.argv and os.fork() == 0:  # a child that outlives us
            os.setsid()
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the test reads to our end
            time.sleep(30)
            os._exit(0)
        print(result.content[0].text, flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""


@asynccontextmanager
async def parent(path: str, *extra: str) -> AsyncIterator[tuple[int, dict[str, int]]]:
    """A process that started the server through the library: its pid and the server's."""
    env = {**os.environ, "PATH": path}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PARENT, *extra, stdout=asyncio.subprocess.PIPE, env=env
    )
    server: dict[str, int] = {}
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        server = json.loads(line)
        yield process.pid, server
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
        kill_all(*server.values())  # whatever the test found, nothing stays


def kill_all(*pids: int) -> None:
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("path", [os.environ.get("PATH", os.defpath), "/nonexistent"])
async def test_a_parent_killed_with_sigkill_leaves_nothing_of_its_server(path: str) -> None:
    """The second PATH has no setpriv: the parent-death signal comes from a preexec."""
    async with parent(path) as (pid, server):
        assert alive(server["pid"]) and alive(server["grandchild"])
        assert parent_of(server["pid"]) == pid
        os.kill(pid, signal.SIGKILL)
        try:
            await until(
                lambda: not alive(server["pid"]) and not alive(server["grandchild"]), timeout=2
            )
        finally:
            kill_all(server["pid"], server["grandchild"])


async def test_without_the_lifeline_the_direct_child_still_dies_with_its_parent() -> None:
    async with parent(os.environ.get("PATH", os.defpath)) as (pid, server):
        helpers = [p for p in processes_with("_lifeline_main.py") if parent_of(p) == pid]
        assert len(helpers) == 1
        os.kill(helpers[0], signal.SIGKILL)
        await until(lambda: not alive(helpers[0]), timeout=2)
        os.kill(pid, signal.SIGKILL)
        await until(lambda: not alive(server["pid"]), timeout=2)


async def test_a_forked_child_of_the_parent_does_not_keep_its_servers_alive() -> None:
    """The child inherits the parent's end of the lifeline's pipe; it must not hold it."""
    async with parent(os.environ.get("PATH", os.defpath), "--fork") as (pid, server):
        forked = [p for p in processes_with("-c") if parent_of(p) == pid and p != server["pid"]]
        os.kill(pid, signal.SIGKILL)
        try:
            await until(lambda: not alive(server["grandchild"]), timeout=2)
        finally:
            kill_all(*forked)
