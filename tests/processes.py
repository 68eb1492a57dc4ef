"""The process table, read from /proc, for tests that check nothing is left running.

PID 1 on the test machines may never reap orphans, so "gone" (no /proc entry at all) and
"alive" (present and not a zombie) are different questions.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from paicli.mcp import ClientSession, ProcessTransport


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """The /proc/PID/stat fields after the parenthesised command name (state, ppid, pgrp,
    ...), or None once the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def state_of(pid: int) -> str | None:
    """The process state letter ("S", "R", "Z", ...), or None once the process is gone."""
    fields = _stat_fields(pid)
    return fields[0].decode() if fields else None


def parent_of(pid: int) -> int | None:
    """The parent's pid, or None once the process is gone."""
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else None


def alive(pid: int) -> bool:
    """Present and not a zombie."""
    return state_of(pid) not in (None, "Z")


def gone(pid: int) -> bool:
    """Neither running nor a zombie left unreaped."""
    return state_of(pid) is None


def _pids() -> list[str]:
    return [entry for entry in os.listdir("/proc") if entry.isdigit()]


def processes_with(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains `marker`."""
    found = []
    for entry in _pids():
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and alive(int(entry)):
            found.append(int(entry))
    return found


def in_group(pgid: int) -> bool:
    """Whether a live (non-zombie) process is in process group `pgid`."""
    for entry in _pids():
        fields = _stat_fields(entry)
        if fields and len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


async def until(condition: Callable[[], bool], *, timeout: float = 10.0) -> None:
    """Wait until `condition()` holds, checking every 10 ms, for at most `timeout` seconds.

    For process-table facts, which no event announces (a process ending that is not our
    child, a group emptying); everything else waits on events."""
    async with asyncio.timeout(timeout):
        while not condition():  # noqa: ASYNC110 - no event exists for these facts
            await asyncio.sleep(0.01)


def server_process(session: ClientSession) -> ProcessTransport:
    """The local process behind `session` (a stdio server's)."""
    process = session.process
    assert process is not None, f"{session.name}: not a stdio session"
    return process
