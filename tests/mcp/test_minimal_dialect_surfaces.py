"""Minimal-dialect tools through paicli's own surfaces, as a user runs them: `paicli mcp
list|tools|call|probe`, `/mcp` in the REPL (a real pseudo-terminal) and the one-shot agent
(the scripted model on 127.0.0.1), with the tools as real subprocesses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli as oneshot
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import Json, ScriptedLlm
from tests.model_view import unfenced
from tests.ui.test_repl import MARK, Places, goodbye, ready
from tests.ui.test_repl import paicli as repl

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

PYTHON_TOOL = [sys.executable, str(SERVER_PROGRAMS / "minimal_tool.py"), "--crash-on-unexpected"]
SHELL_TOOL = ["/bin/sh", str(SERVER_PROGRAMS / "minimal_tool.sh")]


def env_for(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PAICLI_HOME": str(tmp_path / "home")}


def paicli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paicli.cli", *args],
        cwd=tmp_path,
        env=env_for(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_mcp_list_tools_and_call_work_with_minimal_tools(tmp_path: Path) -> None:
    assert paicli(tmp_path, "mcp", "add", "py", "--", *PYTHON_TOOL).returncode == 0
    assert paicli(tmp_path, "mcp", "add", "sh", "--", *SHELL_TOOL).returncode == 0
    listed = paicli(tmp_path, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"py\W+(?:\w+\W+)?ready\W+stdio\W+minimal\W+6", listed.stdout)
    assert re.search(r"sh\W+(?:\w+\W+)?ready\W+stdio\W+minimal\W+1", listed.stdout)
    rows = {
        row["name"]: row for row in json.loads(paicli(tmp_path, "mcp", "list", "--json").stdout)
    }
    assert rows["py"]["protocol"] == "minimal" and rows["sh"]["tools"] == 1
    tools = json.loads(paicli(tmp_path, "mcp", "tools", "--json").stdout)
    assert {t["name"] for t in tools} >= {"mcp__py__echo", "mcp__sh__upper"}
    called = paicli(tmp_path, "mcp", "call", "sh", "upper", '{"text": "loud"}')
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "LOUD"
    stats = paicli(tmp_path, "mcp", "call", "py", "stats", '{"text": "a b"}')
    assert json.loads(stats.stdout) == {"length": 3, "words": ["a", "b"]}
    failed = paicli(tmp_path, "mcp", "call", "py", "fail", "{}")
    assert "this tool always fails" in failed.stdout + failed.stderr


def test_mcp_probe_names_the_minimal_dialect(tmp_path: Path) -> None:
    probed = paicli(tmp_path, "mcp", "probe", "--", *SHELL_TOOL)
    assert probed.returncode == 0, probed.stderr
    assert "minimal-sh 1.0  minimal JSON-RPC dialect" in probed.stdout
    assert "upper" in probed.stdout


async def test_the_agent_calls_a_minimal_tool(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    servers = {"tiny": {"command": SHELL_TOOL[0], "args": SHELL_TOOL[1:]}}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    call = {"id": "u", "name": "mcp__tiny__upper", "arguments": '{"text": "agent"}'}
    script: list[Json] = [{"tool_calls": [call]}, {"text": "done"}]
    async with ScriptedLlm(script) as llm:
        run = await oneshot(project, "--trust-project", "--yes", "-p", "shout", llm=llm)
    assert run.code == 0, run.stderr
    assert run.stdout.strip() == "done"
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert "mcp__tiny__upper" in offered
    answer = next(m for m in llm.requests[1]["messages"] if m["role"] == "tool")
    assert unfenced(answer["content"]) == "AGENT"


async def test_slash_mcp_in_the_repl_shows_the_minimal_dialect(tmp_path: Path) -> None:
    places = Places(tmp_path / "home", tmp_path / "project", f"minimal-repl-{tmp_path.name}")
    places.home.mkdir()
    (places.project / ".paicli").mkdir(parents=True)
    servers = {"tiny": {"command": SHELL_TOOL[0], "args": SHELL_TOOL[1:]}}
    (places.project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    async with repl(places) as term:
        await ready(term, "tiny", 1)
        term.line("/mcp")
        await term.expect(re.compile(r"NAME\W+STATE\W+TRANSPORT\W+PROTOCOL"))
        await term.expect(re.compile(r"tiny\W+ready\W+stdio\W+minimal\W+1"))
        await term.expect(MARK)
        term.line("/mcp tools tiny")
        await term.expect("mcp__tiny__upper  The text in capitals.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
