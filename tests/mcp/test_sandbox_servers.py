"""Sandboxed stdio servers, in real processes: the attacks of a hostile server, what it
leaves behind, and its limits, under each Linux mechanism.

tests/server_programs/escape_server.py tries each thing on request;
tests/server_programs/hog_server.py uses resources without end. What an attack leaves
behind sleeps with a marker on its command line, so it is found in the process table
whatever PID namespace it started in.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import paicli.mcp as m
from paicli.mcp._sandbox.support import _Cache
from tests.conftest import SERVER_PROGRAMS
from tests.mcp.test_limits import CGROUPS, needs_cgroup
from tests.processes import processes_with, until
from tests.sandboxes import BASHRC, KEY, home, listener, mechanism

pytestmark = [pytest.mark.real, pytest.mark.skipif(sys.platform != "linux", reason="Linux")]
__all__ = ["home", "mechanism"]  # fixtures
TIMEOUT = 30.0


def escape_server(sandbox: m.Sandbox | None, limits: m.Limits | None = None) -> m.StdioServer:
    return m.StdioServer(
        sys.executable,
        args=[str(SERVER_PROGRAMS / "escape_server.py")],
        name="escape",
        sandbox=sandbox,
        limits=limits,
        request_timeout=TIMEOUT,
    )


async def said(session: m.ClientSession, tool: str, **args: object) -> str:
    block = (await session.call_tool(tool, args, timeout=TIMEOUT)).content[0]
    assert isinstance(block, m.TextContent)
    return block.text


def sweep(marker: str) -> list[int]:
    """Kill what an unsandboxed attack left (the control run); the pids it had."""
    left = processes_with(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.fixture
def marker() -> Iterator[str]:
    """A mark for what an attack leaves behind; whatever still has it at the end is killed."""
    mark = f"paicli-test-{uuid.uuid4().hex}"
    yield mark
    sweep(mark)


async def left_behind(session: m.ClientSession, tool: str, marker: str) -> dict[str, Any]:
    """Ask for a process to be left behind; its report, once it runs with `marker`."""
    report: dict[str, Any] = json.loads(await said(session, tool, marker=marker))
    await until(lambda: bool(processes_with(marker)))
    return report


async def test_a_sandboxed_server_can_neither_read_secrets_nor_write_outside_nor_connect(
    mechanism: str, home: Path
) -> None:
    key, bashrc = str(home / ".ssh" / "id_ed25519"), str(home / ".bashrc")
    async with listener() as (port, seen):
        async with m.connect(escape_server(None)) as plain:
            assert await said(plain, "read_file", path=key) == "read: " + KEY
            assert await said(plain, "write_file", path=bashrc, text="evil") == "wrote"
            assert await said(plain, "connect", port=port) == "connected"
        (home / ".bashrc").write_text(BASHRC)
        project = home / "project"
        async with m.connect(escape_server(m.Sandbox.for_project(project))) as boxed:
            assert (await said(boxed, "read_file", path=key)).startswith("refused: ")
            assert (await said(boxed, "write_file", path=bashrc, text="evil")).startswith("refused")
            assert (await said(boxed, "connect", port=port)).startswith("refused: ")
            inside = str(project / "notes.txt")
            assert await said(boxed, "write_file", path=inside, text="ok") == "wrote"
    assert (home / ".bashrc").read_text() == BASHRC
    assert len(seen) == 1


async def test_a_server_that_calls_setsid_and_double_forks_is_stopped_with_its_session(
    mechanism: str, home: Path, marker: str
) -> None:
    if mechanism == "landlock" and not CGROUPS:
        pytest.skip("under Landlock only a cgroup gathers a double fork, and none works here")
    async with m.connect(escape_server(None)) as plain:
        await left_behind(plain, "daemon", marker)
    assert sweep(marker), "without a sandbox the double fork outlives the server"

    async with m.connect(escape_server(m.Sandbox.for_project(home / "project"))) as boxed:
        await left_behind(boxed, "daemon", marker)
    await until(lambda: not processes_with(marker))


@needs_cgroup
async def test_a_server_that_leaves_its_cgroup_is_still_stopped_and_stays_limited(
    mechanism: str, home: Path, marker: str
) -> None:
    limits = m.Limits(processes=32)
    async with m.connect(escape_server(None, limits)) as plain:
        report = await left_behind(plain, "leave_cgroup", marker)
    assert report["moved"], "without a sandbox (as root) the process leaves its cgroup"
    assert sweep(marker), "and outlives the server"

    sandbox = m.Sandbox.for_project(home / "project")
    async with m.connect(escape_server(sandbox, limits)) as boxed:
        report = await left_behind(boxed, "leave_cgroup", marker)
    assert not report["moved"] and report["errors"]
    assert set(report["errors"]) <= {"Read-only file system", "Permission denied"}
    await until(lambda: not processes_with(marker))


def hog(sandbox: m.Sandbox, limits: m.Limits) -> m.StdioServer:
    args = [str(SERVER_PROGRAMS / "hog_server.py")]
    return m.StdioServer(sys.executable, args=args, name="hog", limits=limits, sandbox=sandbox)


@needs_cgroup
async def test_the_process_limit_holds_inside_the_sandbox(mechanism: str, home: Path) -> None:
    async with m.connect(hog(m.Sandbox.for_project(home), m.Limits(processes=16))) as session:
        report = json.loads(await said(session, "fork"))
    assert report["error"] == "Resource temporarily unavailable"
    assert 0 < len(report["children"]) < 16


async def test_a_sandboxed_server_stopped_by_its_cpu_limit_is_reported_so(
    mechanism: str, home: Path
) -> None:
    """bwrap reports a signal as 128+N; the limit is still recognised."""
    async with m.connect(hog(m.Sandbox.for_project(home), m.Limits(cpu=1))) as session:
        with pytest.raises(m.ConnectionClosed) as caught:
            await session.call_tool("spin", {}, timeout=TIMEOUT)
    assert caught.value.limit == "CPU limit (1 s)"
    assert caught.value.exit_code == -signal.SIGXCPU


async def test_a_config_entry_with_sandbox_true_runs_its_server_sandboxed(
    mechanism: str, home: Path
) -> None:
    entry = {
        "command": sys.executable,
        "args": [str(SERVER_PROGRAMS / "escape_server.py")],
        "cwd": str(home / "project"),
        "sandbox": True,
    }
    async with m.connect(entry, name="escape") as session:
        key = str(home / ".ssh" / "id_ed25519")
        assert (await said(session, "read_file", path=key)).startswith("refused: ")
        assert await said(session, "write_file", path="here.txt", text="ok") == "wrote"
    assert (home / "project" / "here.txt").read_text() == "ok"


async def test_where_no_sandbox_works_a_strict_server_does_not_start_and_a_lax_one_warns(
    monkeypatch: pytest.MonkeyPatch, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    nothing = m.SandboxSupport("bwrap is not installed", "no Landlock", "no seccomp", "macOS only")
    monkeypatch.setattr(_Cache, "support", nothing)
    strict = m.Sandbox.for_project(home / "project")
    with pytest.raises(m.ConnectionClosed) as caught:
        async with m.connect(escape_server(strict)):
            pass
    assert str(caught.value) == (
        "escape: not started: no sandbox works here (bubblewrap: bwrap is not installed; "
        "Landlock: no Landlock)"
    )
    lax = dataclasses.replace(strict, strict=False)
    with caplog.at_level(logging.WARNING, logger="paicli.mcp.stdio"):
        async with m.connect(escape_server(lax)) as session:
            assert await said(session, "echo", text="unsandboxed") == "unsandboxed"
    assert "escape: running without a sandbox: no sandbox works here" in caplog.text
