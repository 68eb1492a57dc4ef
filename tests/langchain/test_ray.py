"""Bridged tools on Ray, for real: a tool (or a toolset) sent to Ray tasks starts one server
per worker process, on the first call there, reused by every later task in that worker; and
no server outlives its worker. Ray is slow to start (seconds on two cores), so the local Ray
is shared (tests/conftest.py) and the tests here are few."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections import defaultdict
from types import ModuleType

import pytest

from paicli.langchain import MCPTool, McpToolset, load_tools
from paicli.mcp import StdioServer
from tests.langchain.conftest import TOOL_SERVER
from tests.processes import alive, parent_of, processes_with, until

pytestmark = [pytest.mark.real, pytest.mark.xdist_group("ray")]


def test_a_tool_sent_to_ray_tasks_starts_one_server_per_worker_process(
    local_ray: ModuleType,
) -> None:
    ray = local_ray
    marker = f"ray-tools-{uuid.uuid4().hex}"
    server = StdioServer(sys.executable, [str(TOOL_SERVER), marker], name="tools")

    # Defined here, so Ray sends it by value (the workers need not import the tests).
    def answer(sent: MCPTool | McpToolset) -> tuple[int, int]:
        """(the worker's pid, the pid of the server that answered)."""
        if isinstance(sent, McpToolset):
            with sent as (tool,):
                return os.getpid(), int(tool.invoke({}))
        return os.getpid(), int(sent.invoke({}))

    task = ray.remote(answer)
    unopened = load_tools(server, include=["pid"])
    with load_tools(server, include=["pid"]) as (tool,):
        here = int(tool.invoke({}))
        sent = [tool if i % 2 else unopened for i in range(8)]
        answers = ray.get([task.remote(s) for s in sent], timeout=180)
        servers: dict[int, set[int]] = defaultdict(set)
        for worker, answered in answers:
            servers[worker].add(answered)
        # One server per worker process, whatever it was sent, started by that worker.
        assert all(len(started) == 1 for started in servers.values()), servers
        started = {worker: pid for worker, (pid,) in servers.items()}
        assert len(set(started.values())) == len(started)
        assert all(parent_of(pid) == worker for worker, pid in started.items())
        assert sorted(processes_with(marker)) == sorted([here, *started.values()])
    # The workers end (Ray is shared with other tests, so they are killed rather than Ray
    # shut down): their servers end with them.
    for worker in started:
        os.kill(worker, signal.SIGKILL)
    asyncio.run(until(lambda: not any(alive(pid) for pid in started.values()), timeout=30))
    assert processes_with(marker) == []
