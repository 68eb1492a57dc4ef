"""Background jobs in `paicli -p`, end to end: a real paicli process, the scripted model on
127.0.0.1 and tests/server_programs/task_server.py as a real process. The run waits for its
jobs before the final answer; a job that never ends is cut at the call's maximum and
cancelled on the server; a huge result is capped like any other; nothing is left running."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_oneshot import paicli
from tests.conftest import SERVER_PROGRAMS
from tests.in_process import Run
from tests.llm_server import Json, ScriptedLlm
from tests.processes import processes_with, until

pytestmark = pytest.mark.real

SCRIPT = str(SERVER_PROGRAMS / "task_server.py")


def project_with(tmp_path: Path, *options: str, **entry: Any) -> Path:
    root = tmp_path / "project"
    (root / ".paicli").mkdir(parents=True)
    server = {"command": sys.executable, "args": [SCRIPT, *options], **entry}
    (root / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"tasks": server}}))
    return root


def slow(text: str) -> Json:
    arguments = json.dumps({"text": text})
    return {"tool_calls": [{"name": "mcp__tasks__slow", "arguments": arguments}]}


async def job_run(root: Path, script: list[Json]) -> tuple[Run, ScriptedLlm]:
    """`paicli -p go` in `root` (trusted, yes to all) against `script`; exit code 0."""
    async with ScriptedLlm(script) as llm:
        run = await paicli(root, "-p", "go", "--trust-project", "--yes", llm=llm)
    assert run.code == 0, run.stderr
    return run, llm


def delivered(request: Json) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


@pytest.mark.parametrize("protocol", ["2025-11-25", "modern"])
async def test_the_run_waits_for_its_job_and_the_model_reads_the_result(
    tmp_path: Path, protocol: str
) -> None:
    log = tmp_path / "project" / "methods"  # (inside the project: its sandbox)
    root = project_with(tmp_path, "--polls", "3", "--log", str(log), protocol=protocol)
    script: list[Json] = [slow("hi"), {"text": "Waiting for it."}, {"text": "It said: done."}]
    run, llm = await job_run(root, script)
    assert run.stdout.endswith("It said: done.\n")
    assert "background job: job 1 (MCP task 'task-1')" in llm.requests[1]["messages"][-1]["content"]
    last = delivered(llm.requests[2])[-1]
    assert "Background job 1 (tasks/slow, MCP task 'task-1') ended: completed." in last
    assert "done: hi" in last
    methods = log.read_text().splitlines()
    assert methods.count("tasks/get") == 3
    assert "tasks/cancel" not in methods


async def test_a_job_that_never_ends_is_cut_at_the_maximum_and_cancelled(
    tmp_path: Path,
) -> None:
    log = tmp_path / "project" / "methods"  # (inside the project: its sandbox)
    root = project_with(tmp_path, "--polls", "0", "--log", str(log), timeout=0.5, maxTimeout=1.5)
    script: list[Json] = [slow("forever"), {"text": "Waiting."}, {"text": "It timed out."}]
    _run, llm = await job_run(root, script)
    last = delivered(llm.requests[2])[-1]
    assert "ended: timed out" in last and "did not finish within 1.5s" in last
    assert "tasks/cancel" in log.read_text().splitlines()
    await until(lambda: processes_with(str(log)) == [])  # no event says a process ended


async def test_a_huge_task_result_is_capped_like_any_tool_result(tmp_path: Path) -> None:
    root = project_with(tmp_path, "--mode", "huge", "--polls", "1")
    script: list[Json] = [slow("big"), {"text": "Waiting."}, {"text": "Big."}]
    _run, llm = await job_run(root, script)
    last = delivered(llm.requests[2])[-1]
    assert "Background job 1" in last
    assert 1000 < len(last) < 110_000  # 300 000 characters came back
    assert "tool-results" in last  # saved whole, as a capped result is


async def test_a_task_id_with_escapes_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    root = project_with(tmp_path, "--mode", "escape", "--polls", "1")
    script: list[Json] = [slow("x"), {"text": "Waiting."}, {"text": "Done."}]
    run, llm = await job_run(root, script)
    assert "\x1b[31m" not in run.stderr + run.stdout and "\x07" not in run.stderr
    assert "Background job 1" in delivered(llm.requests[2])[-1]
