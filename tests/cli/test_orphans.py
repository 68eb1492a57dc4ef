"""paicli killed with SIGKILL leaves no server process behind. A real `paicli -p` waits on the
scripted model with three stdio servers running, one of which ignores SIGTERM and started a
child of its own; `kill -9` paicli, and within 2 s nothing of them is left. While it ran, the
record its next start sweeps listed the three servers."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import sys
from pathlib import Path

import pytest

from tests import zygote_process
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import ScriptedLlm
from tests.processes import alive, parent_of, processes_with, until

pytestmark = pytest.mark.real

FAULT = str(SERVER_PROGRAMS / "fault_server.py")


def children_of(pids: list[int]) -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and parent_of(int(e)) in pids]


async def test_paicli_killed_with_sigkill_leaves_no_server_process(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    home.mkdir(mode=0o700)
    mark = f"orphan-test-{secrets.token_hex(4)}"
    servers = {
        name: {"command": sys.executable, "args": [FAULT, "--mode", mode, "--initial-stderr", mark]}
        for name, mode in (
            ("plain", "normal"),
            ("stubborn", "ignore_sigterm"),
            ("rich", "features"),
        )
    }
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    env = {**os.environ, "PAICLI_HOME": str(home), "HOME": str(tmp_path), "PAICLI_API_KEY": "k"}
    started: list[int] = []
    async with ScriptedLlm([{"text": "thinking", "hang": True}]) as llm:
        paicli = await zygote_process.create_subprocess_exec(
            sys.executable,
            "-m",
            "paicli.cli",
            *("--base-url", llm.base_url, "--model", "scripted", "-p", "hi"),
            cwd=project,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            async with asyncio.timeout(30):
                await llm.wait_for_requests(1)
            # Three servers up, and the stubborn one's own child.
            await until(lambda: len(processes_with(mark)) == 3, timeout=30)
            started = processes_with(mark)
            await until(lambda: len(children_of(started)) >= 1, timeout=30)
            started += children_of(started)
            record = json.loads((home / "runs" / f"{paicli.pid}.json").read_text())
            assert sorted(record["servers"]) == ["plain", "rich", "stubborn"]
            assert (home / "runs").stat().st_mode & 0o777 == 0o700
            assert (home / "runs" / f"{paicli.pid}.json").stat().st_mode & 0o777 == 0o600
            paicli.send_signal(signal.SIGKILL)
            await paicli.wait()
            await until(lambda: not any(alive(pid) for pid in started), timeout=2)
        finally:
            if paicli.returncode is None:
                paicli.kill()
                await paicli.wait()
            for pid in started:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
