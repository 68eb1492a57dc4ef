"""Starting servers, on the virtual clock: the manager's start-up bound limits how many start
at once, not how many may be waiting for their handshake; a start's seconds are told apart
(waiting for a slot, connecting, listing tools), and restarts back off. The SDK's server runs
in memory (tests/memory_connect.py) behind a connector that makes each start take `SLOW`
virtual seconds, as a server's imports or an npx download do."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp import ClientSession
from paicli.servers.manager import ServerManager, ServerState
from tests.conftest import SERVER_PROGRAMS
from tests.memory_connect import memory_connector
from tests.servers.test_manager import FailingStarts, fault, load

pytestmark = pytest.mark.virtual_time

SLOW = 10.0  # seconds each server takes to start
SDK = {"command": "python3", "args": [str(SERVER_PROGRAMS / "sdk_server.py")]}


@contextlib.asynccontextmanager
async def slow_start(spec: Any, /, **options: Any) -> AsyncIterator[ClientSession]:
    """The SDK server in memory, after `SLOW` seconds of starting up."""
    await asyncio.sleep(SLOW)
    async with memory_connector(spec, **options) as session:
        yield session


async def test_twenty_slow_servers_are_ready_in_the_time_of_one(tmp_path: Path) -> None:
    entries = load(tmp_path, {f"slow{i}": dict(SDK) for i in range(20)})
    loop = asyncio.get_running_loop()
    began = loop.time()
    async with asyncio.timeout(10 * SLOW), ServerManager(entries, connector=slow_start) as manager:
        await manager.wait_ready()
        # Eight at a time (the old bound) would take three rounds of SLOW seconds.
        assert loop.time() - began == SLOW
        servers = manager.servers()
        assert {s.state for s in servers} == {ServerState.READY}
    assert {s.ready_after for s in servers} == {SLOW}
    assert {s.start_times.queued for s in servers if s.start_times} == {0.0}
    assert {s.slow_start for s in servers} == {
        "the server took 10.0s to start and answer the handshake"
    }


async def test_a_start_that_waited_for_a_slot_says_so(tmp_path: Path) -> None:
    entries = load(tmp_path, {f"slow{i}": dict(SDK) for i in range(6)})
    manager = ServerManager(entries, connector=slow_start, concurrency=2)
    async with asyncio.timeout(10 * SLOW), manager:
        await manager.wait_ready()
        servers = manager.servers()
    assert (
        sorted(s.ready_after or 0 for s in servers) == [SLOW] * 2 + [2 * SLOW] * 2 + [3 * SLOW] * 2
    )
    last = [s for s in servers if s.ready_after == 3 * SLOW]
    assert {s.slow_start for s in last} == {
        "waited 20.0s for a start slot (2 servers start at once)"
    }


async def test_restarts_back_off_from_half_a_second_doubling_up_to_thirty(tmp_path: Path) -> None:
    policy = {"policy": "on-failure", "maxRestarts": 8}
    entries = load(tmp_path, {"flaky": fault(restart=policy)})
    starts = FailingStarts()
    given_up = asyncio.Event()

    def watch(server: Any) -> None:
        if server.state is ServerState.ERROR and not server.will_restart:
            given_up.set()

    manager = ServerManager(entries, connector=starts, on_change=watch)
    async with asyncio.timeout(1000), manager:
        await given_up.wait()
    gaps = [b - a for a, b in itertools.pairwise(starts.times)]
    assert gaps == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
