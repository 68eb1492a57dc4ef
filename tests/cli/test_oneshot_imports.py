"""`paicli -p` imports in one thread at a time: the model client's loader and the sandbox
probe never import beside another thread (Python 3.11's import locks can fail imports made
in two threads at once, gh-91351). Real processes, their imports watched
(tests/import_watch.py): a regression shows as a clash in every run, not as a rare crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.batch.defaults import Defaults
from paicli.batch.task import Task
from tests.conftest import SERVER_PROGRAMS
from tests.http_servers import run_http_server
from tests.import_watch import watched_paicli
from tests.llm_server import ScriptedLlm

pytestmark = pytest.mark.real


def environment(tmp_path: Path, llm: ScriptedLlm) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "PAICLI_HOME": str(tmp_path / "home" / ".paicli"),
        "PAICLI_API_KEY": "sk-test-IMPORTS-0123456789",
        "PAICLI_BASE_URL": llm.base_url,
        "PAICLI_MODEL": "scripted",
    }
    if "PYTHONPATH" in os.environ:  # the code under test, when it is not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


async def test_a_headless_run_without_servers_imports_in_one_thread_at_a_time(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    async with ScriptedLlm([{"text": "hello"}]) as llm:
        run = await watched_paicli(
            ["-p", "hi", "--output-format", "stream-json"],
            cwd=project,
            environ=environment(tmp_path, llm),
            report=tmp_path / "imports.jsonl",
        )
    assert run.returncode == 0, run.stderr
    assert run.ended
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert events[0]["subtype"] == "init"
    assert events[-1]["result"] == "hello"
    assert run.clashes == []


async def headless_with(tmp_path: Path, server: dict[str, Any]) -> None:
    """`paicli -p` with the project server `server`, its imports watched: the server is
    connected, and no module loaded beside another thread's import."""
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"s": server}}))
    async with ScriptedLlm([{"text": "hello"}]) as llm:
        run = await watched_paicli(
            ["-p", "hi", "--output-format", "stream-json", "--trust-project"],
            cwd=project,
            # Watched imports are slow, the more so on a loaded machine: the 3 s a server
            # may take to start before the model is asked without it is not the point here.
            environ={**environment(tmp_path, llm), "PAICLI_MCP_START_BUDGET": "60"},
            report=tmp_path / "imports.jsonl",
        )
    assert run.returncode == 0, run.stderr
    assert run.ended
    init = json.loads(run.stdout.splitlines()[0])
    assert [s["status"] for s in init["mcp_servers"]] == ["connected"]
    assert run.clashes == []


async def test_a_headless_run_with_a_server_to_wait_for_imports_in_one_thread_at_a_time(
    tmp_path: Path,
) -> None:
    """The server starts while the model client loads: what it needs was imported first."""
    server = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    await headless_with(tmp_path, server)


async def test_a_headless_run_with_an_http_server_imports_in_one_thread_at_a_time(
    tmp_path: Path,
) -> None:
    """A remote server starts while the model client loads: its transport and its OAuth
    support (every remote server may be asked to log in) were imported first, and the
    keyring's probe takes its turn with the loader."""
    async with run_http_server("http_fault_server.py", "--mode", "json") as url:
        await headless_with(tmp_path, {"type": "http", "url": url})


async def test_a_batch_workers_first_task_imports_in_one_thread_at_a_time(tmp_path: Path) -> None:
    """A batch worker's first task, with a server of its own: the server starts while the
    model client loads, and neither the start nor the turn imports beside the loader."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    server = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    task = Task(line=1, id="t1", prompt="hi", servers={"fault": server})
    job = {"task": task.to_wire(), "defaults": Defaults().to_wire(), "scratch": str(scratch)}
    async with ScriptedLlm([{"text": "hello"}]) as llm:
        run = await watched_paicli(
            ["--module", "paicli.cli.batch_worker", str(scratch)],
            cwd=tmp_path,
            environ=environment(tmp_path, llm),
            report=tmp_path / "imports.jsonl",
            stdin=json.dumps(job).encode() + b"\n",
        )
    assert run.returncode == 0, run.stderr
    assert run.ended
    lines = run.stdout.splitlines()
    assert json.loads(lines[0]) == {"ready": True}
    assert json.loads(lines[1])["result"] == "hello"
    assert run.clashes == []


def test_the_one_shot_path_loads_neither_the_mcp_session_nor_the_sandbox_nor_yaml() -> None:
    """What only a server, a command or a command file with front matter needs is loaded
    when one is there: a run with none writes its first line sooner."""
    heavy = ("paicli.mcp.session", "paicli.mcp.types", "paicli.mcp._sandbox.support", "yaml")
    code = f"import sys, paicli.cli.oneshot; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
