"""Many slow servers start together: the manager's start-up bound limits how many start at
once, not how many may be waiting for their handshake. In memory (tests/memory_connect.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from paicli.servers.manager import ServerState
from tests.servers.test_manager import fault, in_memory, load

SLOW = 1.0  # seconds each server takes before it reads its first message


async def test_twenty_slow_servers_are_ready_in_about_the_time_of_one(tmp_path: Path) -> None:
    servers = {f"slow{i}": fault("normal") for i in range(20)}
    for entry in servers.values():
        entry["args"] = [*entry["args"], "--start-delay", str(SLOW)]
    entries = load(tmp_path, servers)
    # Eight at a time (the old bound) would take three rounds of SLOW seconds.
    async with asyncio.timeout(2.5 * SLOW), in_memory(entries) as manager:
        await manager.wait_ready()
        assert {s.state for s in manager.servers()} == {ServerState.READY}
