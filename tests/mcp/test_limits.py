"""Resource limits on real stdio servers: each hog is stopped by its limit, nothing is left.

The hogs are tools of tests/server_programs/hog_server.py; the Node tests run the npm reference
servers and a `node -e` allocation loop. Processes are bounded by a cgroup's `pids.max`,
which this machine must let us create (tests that need one say so when skipped).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

import paicli.mcp as m
from paicli.mcp._cgroup import Cgroup, CgroupUnavailable
from tests.conftest import SERVER_PROGRAMS, fault_server
from tests.processes import alive, server_process

NPM = Path(__file__).resolve().parents[1] / "npm" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = NPM / "server-everything" / "dist" / "index.js"
FILESYSTEM = NPM / "server-filesystem" / "dist" / "index.js"
NODE = shutil.which("node")
MiB = 1024 * 1024
TIMEOUT = 30.0

pytestmark = [pytest.mark.real, pytest.mark.skipif(sys.platform != "linux", reason="Linux")]


def _cgroups_work() -> bool:
    try:
        Cgroup.create(max_tasks=8).remove()
    except CgroupUnavailable:
        return False
    return True


CGROUPS = _cgroups_work()
needs_cgroup = pytest.mark.skipif(not CGROUPS, reason="no writable cgroup with 'pids' here")
needs_node = pytest.mark.skipif(
    NODE is None or not EVERYTHING.is_file(), reason="node and tests/npm are needed"
)


def hog(limits: m.Limits, *extra: str) -> m.StdioServer:
    return m.StdioServer(
        sys.executable,
        args=[str(SERVER_PROGRAMS / "hog_server.py"), *extra],
        name="hog",
        limits=limits,
        request_timeout=TIMEOUT,
    )


@asynccontextmanager
async def two_servers(limits: m.Limits, *extra: str) -> AsyncIterator[tuple[m.ClientSession, ...]]:
    """The limited hog and an unlimited neighbour that must keep working."""
    async with m.connect(hog(limits, *extra)) as limited, m.connect(fault_server()) as other:
        yield limited, other
        reply = await other.call_tool("echo", {"text": "still here"}, timeout=TIMEOUT)
        assert reply.content[0].text == "still here"  # type: ignore[union-attr]


def text(result: m.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, m.TextContent)
    return block.text


async def test_allocation_stops_at_the_memory_limit_and_the_server_carries_on() -> None:
    async with two_servers(m.Limits(memory=128 * MiB)) as (limited, _):
        said = text(await limited.call_tool("allocate", {}, timeout=TIMEOUT))
        assert said.endswith("MiB, then MemoryError")
        assert 0 < int(said.split()[1]) < 128
        assert text(await limited.call_tool("echo", {"text": "ok"}, timeout=TIMEOUT)) == "ok"


async def test_a_server_that_dies_out_of_memory_is_reported_as_stopped_by_its_limit() -> None:
    async with two_servers(m.Limits(memory=128 * MiB), "--die-on-oom") as (limited, _):
        with pytest.raises(m.ConnectionClosed) as caught:
            await limited.call_tool("allocate", {}, timeout=TIMEOUT)
    assert caught.value.limit == "memory limit (128M)"
    assert "hog: stopped by its memory limit (128M)" in str(caught.value)


@needs_node
async def test_a_node_process_out_of_memory_is_stopped_by_its_limit() -> None:
    assert NODE is not None
    grow = "const a = []; for (;;) a.push(Buffer.alloc(1 << 20).fill(1));"
    transport = await m.StdioTransport.start(
        NODE, ["-e", grow], limits=m.Limits(memory=128 * MiB), label="node"
    )
    try:
        with pytest.raises(m.ConnectionClosed) as caught:
            async with asyncio.timeout(TIMEOUT):
                await transport.receive()
    finally:
        await transport.aclose()
    assert caught.value.limit == "memory limit (128M)"


@needs_node
@pytest.mark.parametrize("entry", [EVERYTHING, FILESYSTEM], ids=["everything", "filesystem"])
async def test_node_reference_servers_run_normally_under_512m(entry: Path, tmp_path: Path) -> None:
    """V8 reserves far more address space than 512M; RLIMIT_DATA does not count that."""
    assert NODE is not None
    args = [str(entry), "stdio"] if entry == EVERYTHING else [str(entry), str(tmp_path)]
    (tmp_path / "note.txt").write_text("hello")
    server = m.StdioServer(
        NODE, args=args, limits=m.Limits(memory=512 * MiB), handshake_timeout=TIMEOUT
    )
    async with m.connect(server) as session:
        tools = {t.name for t in await session.list_tools()}
        if entry == EVERYTHING:
            result = await session.call_tool("echo", {"message": "hi"}, timeout=TIMEOUT)
            assert "hi" in text(result)
        else:
            path = str(tmp_path / "note.txt")
            result = await session.call_tool("read_text_file", {"path": path}, timeout=TIMEOUT)
            assert text(result) == "hello"
    assert tools


async def test_spinning_is_stopped_by_the_cpu_limit() -> None:
    async with two_servers(m.Limits(cpu=1)) as (limited, _):
        with pytest.raises(m.ConnectionClosed) as caught:
            await limited.call_tool("spin", {}, timeout=TIMEOUT)
    assert caught.value.limit == "CPU limit (1 s)"
    assert "stopped by its CPU limit (1 s)" in str(caught.value)


async def test_opening_files_stops_at_the_files_limit_and_the_server_carries_on() -> None:
    async with two_servers(m.Limits(files=64)) as (limited, _):
        report = json.loads(text(await limited.call_tool("open_files", {}, timeout=TIMEOUT)))
        assert 0 < report["opened"] < 64
        assert report["error"] == "Too many open files"
        assert text(await limited.call_tool("echo", {"text": "ok"}, timeout=TIMEOUT)) == "ok"


@needs_cgroup
async def test_a_fork_bomb_stops_at_the_processes_limit_and_leaves_nothing() -> None:
    """Root is exempt from RLIMIT_NPROC; the cgroup's pids.max holds for everyone."""
    async with two_servers(m.Limits(processes=16)) as (limited, _):
        report = json.loads(text(await limited.call_tool("fork", {}, timeout=TIMEOUT)))
        children = report["children"]
        assert report["error"] == "Resource temporarily unavailable"
        # The limit counts threads too: the server's own leave room for fewer children.
        assert 0 < len(children) < 16
        assert all(alive(pid) for pid in children)
        cgroup = await asyncio.to_thread(
            Path(f"/proc/{server_process(limited).pid}/cgroup").read_text
        )
        assert f"paicli-{os.getpid()}-" in cgroup
    assert not any(alive(pid) for pid in children)
    assert not list(_our_cgroups())


def _our_cgroups() -> list[Path]:
    roots = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/pids"))
    return [p for root in roots for p in root.glob(f"paicli-{os.getpid()}-*")]


@needs_cgroup
async def test_a_child_that_left_the_process_group_is_killed_with_the_cgroup() -> None:
    async with m.connect(hog(m.Limits(processes=16))) as session:
        escaped = json.loads(text(await session.call_tool("escape", {}, timeout=TIMEOUT)))
        assert alive(escaped["pid"])
    # The shutdown ladder signals the process group, which the child left.
    assert not alive(escaped["pid"])
    assert not list(_our_cgroups())


def _without_cgroups(argv: list[str]) -> list[str]:
    """`argv` run where no cgroup can be made: here already, or (as root) in a mount
    namespace with an empty /sys/fs/cgroup."""
    if not CGROUPS:
        return argv
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("cgroups work here, and hiding them needs root and unshare")
    hide = 'mount -t tmpfs none /sys/fs/cgroup && exec "$@"'
    return ["unshare", "--mount", "sh", "-c", hide, "sh", *argv]


async def test_a_limit_that_cannot_be_applied_keeps_the_server_from_starting() -> None:
    """strict refuses in one line; `strict: false` starts the server without that limit."""
    script = (
        "import asyncio, sys\n"
        "import paicli.mcp as m\n"
        "async def main(strict):\n"
        "    server = m.StdioServer(sys.executable, args=[sys.argv[1]], name='hog',\n"
        "                           limits=m.Limits(processes=8, strict=strict))\n"
        "    try:\n"
        "        async with m.connect(server) as session:\n"
        "            print('started', len(await session.list_tools()))\n"
        "    except m.ConnectionClosed as exc:\n"
        "        print(exc)\n"
        "for strict in (True, False):\n"
        "    asyncio.run(main(strict))\n"
    )
    argv = [sys.executable, "-c", script, str(SERVER_PROGRAMS / "fault_server.py")]
    done = await asyncio.to_thread(
        subprocess.run,
        _without_cgroups(argv),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    refused, started = done.stdout.splitlines()
    assert refused.startswith("hog: not started: processes limit (8) cannot be applied: ")
    assert '"strict": false' in refused
    assert started.startswith("started ")
    assert "processes limit (8) not applied" in done.stderr
