"""paicli's output into a pipe (issue 27): a reader that goes away (`| head`) ends paicli
quietly with 141, as SIGPIPE ends a shell tool, its servers stopped; `mcp list` prints plain
columns a script can read. Real processes: the point is the pipe."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from paicli.ui.mcp_view import PLAIN_COLUMNS
from tests import zygote_process
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import ScriptedLlm
from tests.processes import processes_with

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

READER_GONE = 141


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose one server carries a marker to find it among processes."""
    root = tmp_path / "project"
    (root / ".paicli").mkdir(parents=True)
    fault = [str(SERVER_PROGRAMS / "fault_server.py"), "--initial-stderr", str(tmp_path)]
    servers = {"fault": {"command": sys.executable, "args": fault}}
    (root / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return root


async def into_closed_pipe(
    project: Path, *args: str, stdin: str = "", environ: Mapping[str, str] | None = None
) -> tuple[int, str]:
    """`paicli ARGS` whose stdout is a pipe nobody reads any more: exit code and stderr."""
    reading, writing = os.pipe()
    os.close(reading)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(project.parent / "home"),
        "PAICLI_HOME": str(project.parent / "home" / ".paicli"),
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
        **(environ or {}),
    }
    try:
        process = await zygote_process.create_subprocess_exec(
            *(sys.executable, "-m", "paicli.cli", "--trust-project", *args),
            cwd=project,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=writing,
            stderr=asyncio.subprocess.PIPE,
        )
    finally:
        os.close(writing)
    async with asyncio.timeout(60):
        _, errors = await process.communicate(stdin.encode())
    assert process.returncode is not None
    return process.returncode, errors.decode()


def quiet(errors: str) -> bool:
    return not re.search(r"Traceback|internal error|Broken ?pipe|Exception ignored", errors, re.I)


@pytest.mark.parametrize(
    "args", [("mcp", "tools"), ("mcp", "list"), ("mcp", "tools", "--json"), ("--resume",)]
)
async def test_a_reader_gone_ends_a_command_quietly_and_stops_its_servers(
    project: Path, args: tuple[str, ...]
) -> None:
    code, errors = await into_closed_pipe(project, *args)
    assert code == READER_GONE, errors
    assert quiet(errors), errors
    assert processes_with(str(project.parent)) == []


async def test_a_reader_gone_ends_the_repl_quietly(project: Path) -> None:
    code, errors = await into_closed_pipe(project, stdin="/help\n")
    assert code == READER_GONE, errors
    assert quiet(errors), errors


async def test_a_reader_gone_ends_a_one_shot_run_quietly(project: Path) -> None:
    async with ScriptedLlm([{"text": "word " * 50_000}]) as llm:  # more than a pipe holds
        flags = ("--base-url", llm.base_url, "--model", "scripted", "-p", "say it")
        code, errors = await into_closed_pipe(project, *flags, environ={"PAICLI_API_KEY": "k"})
    assert code == READER_GONE, errors
    assert quiet(errors), errors


async def test_mcp_list_into_a_pipe_is_plain_columns(project: Path) -> None:
    env = {**os.environ, "HOME": str(project.parent), "PAICLI_HOME": str(project.parent / "h")}
    process = await zygote_process.create_subprocess_exec(
        *(sys.executable, "-m", "paicli.cli", "mcp", "list", "--trust-project"),
        cwd=project,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        out, errors = await process.communicate()
    assert process.returncode == 0, errors
    header, row = out.decode().splitlines()
    assert header.split() == list(PLAIN_COLUMNS)
    assert row.split()[:6] == ["fault", "project", "ready", "stdio", "2025-11-25", "11"]
    assert not re.search("[│━┃╇●]", out.decode())
    assert row.index("ready") == header.index("STATE")  # aligned under its heading
