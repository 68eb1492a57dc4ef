"""A hostile project server, from the repository's `.paicli/mcp.json` and approved by the user,
run by paicli's server manager in real processes: it cannot write `~/.bashrc`, read
`~/.ssh/id_ed25519`, reach a listener on 127.0.0.1, leave processes behind (setsid and a
double fork, or moving itself out of its cgroup), or pass its limits. Each attack is tried
first with the same entry saying `"sandbox": false` (approved as well), where it must work,
so every test proves something on this machine. Under each Linux mechanism that works here;
skipped, with why, where none does.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from paicli.home import PaicliHome
from paicli.servers.config import ServerEntry, load_config
from paicli.servers.manager import ServerManager, ServerState
from paicli.servers.trust import TrustStore, approve_servers
from tests.conftest import SERVER_PROGRAMS
from tests.mcp.test_limits import CGROUPS, needs_cgroup
from tests.processes import processes_with, until
from tests.sandboxes import BASHRC, KEY, home, listener, mechanism

pytestmark = [pytest.mark.real, pytest.mark.skipif(sys.platform != "linux", reason="Linux")]
__all__ = ["home", "mechanism"]  # fixtures
TIMEOUT = 30.0


def approved(home: Path, server: str, **entry: Any) -> ServerEntry:
    """The project's server `server` (a script in tests/servers) as the repository ships it,
    approved by the user as it is (keys given None are left out)."""
    entry = {key: value for key, value in entry.items() if value is not None}
    project = home / "project"
    (project / ".git").mkdir(exist_ok=True)
    (project / ".paicli").mkdir(exist_ok=True)
    written = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / server)], **entry}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"srv": written}}))
    config = load_config(project, environ={"HOME": str(home), "PATH": os.defpath})
    store = TrustStore(PaicliHome(home / ".paicli").trust_store)
    store.approve(project, config.servers["srv"])
    allowed, _ = approve_servers(
        config.servers.values(), project, store, trust_all=False, ask=None, passing=config.passing
    )
    (entry_as_run,) = allowed
    return entry_as_run


@asynccontextmanager
async def running(entry: ServerEntry) -> AsyncIterator[ServerManager]:
    """The server started as paicli starts it (the sandbox's check, then `connect`)."""
    async with ServerManager([entry]) as manager:
        await manager.wait_ready(timeout=TIMEOUT)
        server = manager.get("srv")
        assert server.state is ServerState.READY, server.error
        yield manager


async def said(manager: ServerManager, tool: str, **args: object) -> str:
    return (await manager.call_tool("srv", tool, args)).text


@pytest.fixture
def marker() -> Iterator[str]:
    """A mark for what an attack leaves behind; whatever still has it at the end is killed."""
    mark = f"paicli-test-{uuid.uuid4().hex}"
    yield mark
    sweep(mark)


def sweep(marker: str) -> list[int]:
    left = processes_with(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


async def test_an_approved_project_server_cannot_write_read_secrets_or_reach_loopback(
    mechanism: str, home: Path
) -> None:
    key, bashrc = str(home / ".ssh" / "id_ed25519"), str(home / ".bashrc")
    async with listener() as (port, seen):
        async with running(approved(home, "escape_server.py", sandbox=False)) as plain:
            assert await said(plain, "read_file", path=key) == "read: " + KEY
            assert await said(plain, "write_file", path=bashrc, text="evil") == "wrote"
            assert await said(plain, "connect", port=port) == "connected"
        (home / ".bashrc").write_text(BASHRC)
        async with running(approved(home, "escape_server.py")) as boxed:
            assert (await said(boxed, "read_file", path=key)).startswith("refused: ")
            assert (await said(boxed, "write_file", path=bashrc, text="x")).startswith("refused")
            assert (await said(boxed, "connect", port=port)).startswith("refused: ")
            inside = str(home / "project" / "notes.txt")
            assert await said(boxed, "write_file", path=inside, text="ok") == "wrote"
    assert (home / ".bashrc").read_text() == BASHRC
    assert len(seen) == 1  # the unsandboxed run's


@pytest.mark.parametrize("attack", ["daemon", "leave_cgroup"])
async def test_what_a_project_server_leaves_behind_is_stopped_with_it(
    mechanism: str, home: Path, marker: str, attack: str
) -> None:
    if attack == "leave_cgroup" and not CGROUPS:
        pytest.skip("no writable cgroup with 'pids' here: nothing to leave")
    if mechanism == "landlock" and not CGROUPS:
        pytest.skip("under Landlock only a cgroup gathers what a server leaves, and none works")
    # Leaving a cgroup means having one (a process limit); a double fork alone is caught by
    # one, so it goes without.
    limits = {"processes": 32} if attack == "leave_cgroup" else None
    async with running(approved(home, "escape_server.py", sandbox=False, limits=limits)) as plain:
        json.loads(await said(plain, attack, marker=marker))
        await until(lambda: bool(processes_with(marker)))
    assert sweep(marker), "without the sandbox the process outlives the server"

    async with running(approved(home, "escape_server.py", limits=limits)) as boxed:
        report = json.loads(await said(boxed, attack, marker=marker))
        await until(lambda: bool(processes_with(marker)))
    assert not report["moved"]
    await until(lambda: not processes_with(marker))


@needs_cgroup
async def test_a_project_servers_limits_hold_inside_its_sandbox(mechanism: str, home: Path) -> None:
    entry = approved(home, "hog_server.py", limits={"processes": 16, "memory": "128M"})
    assert entry.spec is not None and entry.containment is not None
    async with running(entry) as boxed:
        allocated = await said(boxed, "allocate")
        forked = json.loads(await said(boxed, "fork"))  # last: the children stay till the end
    assert forked["error"] == "Resource temporarily unavailable"
    assert 0 < len(forked["children"]) < 16
    assert allocated.endswith("then MemoryError") and int(allocated.split()[1]) < 128
