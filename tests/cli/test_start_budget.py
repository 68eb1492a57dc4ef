"""`paicli -p` waits for servers still starting at most its start budget (issue 27: one
server that never answered its handshake made every run take 30.7 s): the first request goes
without the late server's tools, one line says so, and its tools join the next request once
it is up. A first start through a package runner (npx & co.) is shown as installing. Real
processes: paicli, the scripted model, our fault server (a fake `npx` in front of it)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests import zygote_process
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import ScriptedLlm

pytestmark = pytest.mark.real

FAULT = str(SERVER_PROGRAMS / "fault_server.py")


def fault(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [FAULT, *args]}


def fake_npx(tmp_path: Path) -> tuple[Path, str]:
    """An `npx` that runs the fault server once the gate file exists (as if it installed
    it first), whatever package it is given; the gate and a PATH that finds it first."""
    gate = tmp_path / "installed"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(f"#!/bin/sh\nexec {sys.executable} {FAULT} --start-when {gate}\n")
    npx.chmod(0o755)
    return gate, f"{bin_dir}:{os.environ.get('PATH', os.defpath)}"


def offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


async def start_paicli(
    tmp_path: Path, servers: dict[str, Any], llm: ScriptedLlm, **env: str
) -> asyncio.subprocess.Process | zygote_process.ZygoteProcess:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(exist_ok=True)
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    environ = {**os.environ, "PAICLI_HOME": str(home), "HOME": str(tmp_path), **env}
    environ["PAICLI_API_KEY"] = "sk-test"
    return await zygote_process.create_subprocess_exec(
        sys.executable,
        "-m",
        "paicli.cli",
        *("--base-url", llm.base_url, "--model", "scripted", "-p", "hi"),
        cwd=project,
        env=environ,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_a_server_that_never_answers_its_handshake_costs_only_the_start_budget(
    tmp_path: Path,
) -> None:
    servers = {"stuck": fault("--mode", "no_handshake"), "fine": fault()}
    async with ScriptedLlm([{"text": "Done."}]) as llm:
        began = time.monotonic()
        paicli = await start_paicli(tmp_path, servers, llm)
        # Its handshake timeout is 30 s; the run must not wait for it.
        async with asyncio.timeout(20):
            out, err = await paicli.communicate()
        took = time.monotonic() - began
    stderr = err.decode()
    assert paicli.returncode == 0, stderr
    assert out.decode() == "Done.\n"
    assert "paicli: MCP servers not ready after 3s: 'stuck'; the first request goes without" in (
        stderr
    )
    assert stderr.count("not ready after") == 1
    tools = offered(llm.requests[0])
    assert "mcp__fine__echo" in tools
    assert not any(name.startswith("mcp__stuck__") for name in tools)
    print(f"paicli -p with a server that never answers: {took:.1f}s")  # for the record


async def test_a_late_servers_tools_join_the_next_request_and_an_install_is_shown(
    tmp_path: Path,
) -> None:
    """`slow` runs through a fake npx whose start ends when the test says (an install)."""
    gate, path = fake_npx(tmp_path)
    servers = {"fast": fault(), "slow": {"command": "npx", "args": ["-y", "slow-server"]}}
    release = asyncio.Event()
    call = {"name": "mcp__fast__echo", "arguments": '{"text": "x"}'}
    script: list[dict[str, Any]] = [{"tool_calls": [call], "after": release}, {"text": "Done."}]
    async with ScriptedLlm(script) as llm:
        paicli = await start_paicli(tmp_path, servers, llm, PATH=path, PAICLI_MCP_START_BUDGET="1")
        assert paicli.stderr is not None
        lines: list[str] = []

        async def read_until(text: str) -> None:
            while not any(text in line for line in lines):
                line = await paicli.stderr.readline()  # type: ignore[union-attr]
                assert line, f"paicli ended before saying {text!r}: {lines}"
                lines.append(line.decode())

        async with asyncio.timeout(30):
            await read_until("not ready after 1s")
            await llm.wait_for_requests(1)
            assert not any(name.startswith("mcp__slow__") for name in offered(llm.requests[0]))
            gate.touch()  # the install is over: the server starts
            await read_until("MCP server 'slow' is ready")
            release.set()
            _, err = await paicli.communicate()
    lines.append(err.decode())
    stderr = "".join(lines)
    assert paicli.returncode == 0, stderr
    assert "installing slow (npx)… 1s" in stderr or "installing slow (npx)… 2s" in stderr
    assert "its tools join from now on" in stderr
    assert "mcp__slow__echo" in offered(llm.requests[1])


async def test_mcp_list_says_a_first_start_through_npx_is_installing(tmp_path: Path) -> None:
    gate, path = fake_npx(tmp_path)
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    home.mkdir(mode=0o700)
    servers = {"slow": {"command": "npx", "args": ["-y", "slow-server"]}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    env = {**os.environ, "PAICLI_HOME": str(home), "HOME": str(tmp_path), "PATH": path}
    listing = await zygote_process.create_subprocess_exec(
        *(sys.executable, "-m", "paicli.cli", "mcp", "list"),
        cwd=project,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert listing.stderr is not None
    async with asyncio.timeout(30):
        lines = [(await listing.stderr.readline()).decode() for _ in range(2)]
        assert lines[0] == "… slow\n"
        assert lines[1].startswith("… installing slow (npx)… "), lines
        gate.touch()
        out, err = await listing.communicate()
    assert "slow" in out.decode()
    assert listing.returncode == 0, err.decode()
    assert "✓ slow" in err.decode()
