"""The sweep at paicli's start: the record of a paicli that is gone leads to what it left
running (a process carrying its mark, a recorded server whose start time still matches);
a pid reused since, a paicli still running and a record that is not one are left alone.
Real processes, which the sweep kills."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from paicli.mcp import StdioServer
from paicli.servers.leftovers import MARK_VARIABLE, RunRecord, start_time, sweep
from tests.processes import alive, until

pytestmark = pytest.mark.real

WAIT = "import sys; sys.stdin.read()"  # runs until its stdin closes (or it is killed)


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        process.kill()
        process.communicate()  # reaped, its stdin pipe closed


def waiting(processes: list[subprocess.Popen[bytes]], **env: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-c", WAIT], stdin=subprocess.PIPE, env={**os.environ, **env}
    )
    processes.append(process)
    return process


def write(folder: Path, name: str, record: object) -> Path:
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(record))
    return path


async def test_a_dead_runs_leftovers_are_killed_and_nothing_else(
    tmp_path: Path, spawned: list[subprocess.Popen[bytes]]
) -> None:
    folder = tmp_path / "runs"
    token = "a" * 32
    owner = waiting(spawned)
    owner_start = start_time(owner.pid)
    owner.kill()
    owner.wait()  # the paicli that wrote the record is gone
    marked = waiting(spawned, **{MARK_VARIABLE: token})
    recorded = waiting(spawned)
    reused = waiting(spawned)  # its pid is in the record with another start time
    other_run = waiting(spawned, **{MARK_VARIABLE: "b" * 32})
    start = start_time(recorded.pid)
    reused_start = start_time(reused.pid)
    assert start is not None and reused_start is not None
    dead = write(
        folder,
        f"{owner.pid}.json",
        {
            "pid": owner.pid,
            "start": owner_start,
            "token": token,
            "servers": {"a": [recorded.pid, start], "b": [reused.pid, reused_start + 1]},
        },
    )
    me = os.getpid()
    live = write(
        folder,
        f"{me}.json",
        {"pid": me, "start": start_time(me), "token": "b" * 32, "servers": {}},
    )
    garbage = write(folder, "99999999.json", "not a record")
    assert await asyncio.to_thread(sweep, folder) == 2
    await until(lambda: not alive(marked.pid) and not alive(recorded.pid), timeout=2)
    assert alive(reused.pid) and alive(other_run.pid)
    assert not dead.exists()
    assert live.exists() and garbage.exists()


async def test_a_run_marks_its_servers_and_records_them_privately(
    tmp_path: Path, spawned: list[subprocess.Popen[bytes]]
) -> None:
    record = RunRecord(tmp_path / "runs")
    spec = record.marked(StdioServer("server"))
    assert isinstance(spec, StdioServer)
    assert spec.env == {MARK_VARIABLE: record.token}
    server = waiting(spawned)
    record.started("s", server.pid)
    path = tmp_path / "runs" / f"{os.getpid()}.json"
    assert json.loads(path.read_text())["servers"] == {"s": [server.pid, start_time(server.pid)]}
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "runs").stat().st_mode & 0o777 == 0o700
    record.ended("s")
    assert json.loads(path.read_text())["servers"] == {}
    record.close()
    assert not path.exists()


async def test_a_record_that_is_a_link_or_too_large_is_not_read(
    tmp_path: Path, spawned: list[subprocess.Popen[bytes]]
) -> None:
    """A record names processes to kill: one that is a symlink (to a file elsewhere) or
    larger than any record paicli writes is left alone, and so are its processes."""
    folder = tmp_path / "runs"
    folder.mkdir(mode=0o700)
    victim = waiting(spawned)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(
        json.dumps(
            {
                "pid": 1,
                "start": -1,
                "token": "c" * 32,
                "servers": {"x": [victim.pid, start_time(victim.pid)]},
            }
        )
    )
    (folder / "1.json").symlink_to(elsewhere)
    (folder / "2.json").write_bytes(b" " * (2 * 1024 * 1024))
    assert await asyncio.to_thread(sweep, folder) == 0
    assert alive(victim.pid)
    assert (folder / "1.json").is_symlink() and elsewhere.exists()
