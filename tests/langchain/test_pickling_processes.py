"""Bridged tools in other processes, for real: sent pickled to a spawned process they open one
server there on first use and reuse it; a forked child never uses its parent's session; and
no server outlives the process that started it. (Ray: tests/langchain/test_ray.py.)"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import shutil
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from paicli.langchain import BridgeError, MCPTool, ServerUnavailable, load_tools
from paicli.langchain._shared import close_shared
from paicli.mcp import StdioServer
from tests.langchain.conftest import TOOL_SERVER
from tests.processes import alive, parent_of, processes_with, until

pytestmark = pytest.mark.real


def marked_server(marker: str) -> StdioServer:
    """The test tool server with `marker` on its command line (it ignores its arguments)."""
    return StdioServer(sys.executable, [str(TOOL_SERVER), marker], name="tools")


@pytest.fixture
def marker() -> Iterator[str]:
    yield f"pickled-{uuid.uuid4().hex}"
    close_shared()  # this process's shared sessions, opened by unpickled tools


def server_pid(tool: MCPTool) -> tuple[int, int]:
    """(this process, the server that answered): run in the other process."""
    return os.getpid(), int(tool.invoke({}))


def report_from_fork(tool: MCPTool, conn: Connection) -> None:
    try:
        server = int(tool.invoke({}))
        conn.send(("answered", (server, parent_of(server))))
    except BridgeError as exc:
        conn.send(("refused", str(exc)))


def run_in_fork(tool: MCPTool) -> tuple[int, tuple[str, object]]:
    """(the child's pid, what it reported) for `tool` called in a forked child."""
    ours, theirs = multiprocessing.Pipe()
    child = multiprocessing.get_context("fork").Process(
        target=report_from_fork, args=(tool, theirs)
    )
    child.start()
    try:
        assert ours.poll(30), "the forked child never answered"
        said = ours.recv()
    finally:
        child.join(30)
    assert child.pid is not None and child.exitcode == 0
    return child.pid, said


def test_a_tool_sent_to_a_spawned_process_starts_one_server_there_and_reuses_it(
    marker: str,
) -> None:
    with load_tools(marked_server(marker), include=["pid"]) as (tool,):
        here = int(tool.invoke({}))
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
            answers = [pool.submit(server_pid, tool).result(60) for _ in range(3)]
            (worker,) = {w for w, _ in answers}
            (there,) = {s for _, s in answers}  # one server for the three calls
            assert there != here and parent_of(there) == worker
            assert sorted(processes_with(marker)) == sorted([here, there])
        asyncio.run(until(lambda: not alive(there)))  # it ended with its process
        assert processes_with(marker) == [here]
    asyncio.run(until(lambda: not processes_with(marker)))


def test_a_forked_child_starts_its_own_server_rather_than_use_its_parent_s(
    marker: str,
) -> None:
    with load_tools(marked_server(marker), include=["pid"]) as tools:
        sent = pickle.loads(pickle.dumps(tools[0]))
    here = int(sent.invoke({}))  # the shared session of this process
    child, (outcome, answered) = run_in_fork(sent)
    assert outcome == "answered" and isinstance(answered, tuple)
    there, its_parent = answered
    assert there != here and its_parent == child
    asyncio.run(until(lambda: not alive(there)))  # the child's, gone with it
    assert int(sent.invoke({})) == here  # ours is untouched
    assert processes_with(marker) == [here]


def test_a_tool_opened_before_a_fork_is_refused_in_the_child_not_hung(marker: str) -> None:
    with load_tools(marked_server(marker), include=["pid"]) as (tool,):
        assert int(tool.invoke({})) > 0
        _, (outcome, said) = run_in_fork(tool)
    assert outcome == "refused"
    assert "forked" in str(said) and "pickled" in str(said)


def test_a_tool_whose_program_is_missing_where_it_arrives_fails_in_one_line(
    tmp_path: Path, marker: str
) -> None:
    program = tmp_path / "tools.py"
    shutil.copy(TOOL_SERVER, program)
    with load_tools(StdioServer(sys.executable, [str(program), marker]), include=["pid"]) as tools:
        data = pickle.dumps(tools)
    program.unlink()  # as on a node the program was never copied to
    (arrived,) = pickle.loads(data)
    with pytest.raises(ServerUnavailable) as caught:
        arrived.invoke({})
    assert "\n" not in str(caught.value) and str(program) in str(caught.value)
    assert processes_with(marker) == []
