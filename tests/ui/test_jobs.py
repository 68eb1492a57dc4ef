"""Background jobs in the REPL, in process (tests/ui/repl_in_process.py): a tool call the
task server (tests/server_programs/task_server.py, in memory) runs as a task is a job that
`/jobs` lists and `/jobs cancel N` cancels; the model reads how it ended at the next turn."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from paicli.permissions.approval import Mode
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import ScriptedLlm
from tests.processes import processes_with, until
from tests.ui.repl_in_process import ReplInProcess, repl_in_process
from tests.ui.test_repl import MARK, Places, goodbye, paicli


def tasks(*options: str) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [str(SERVER_PROGRAMS / "task_server.py"), *options],
    }


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home


@asynccontextmanager
async def jobs_repl(
    places: tuple[Path, Path], script: list[dict[str, Any]], *options: str
) -> AsyncIterator[ReplInProcess]:
    """The REPL (in yolo mode) with the task server, after the first prompt: "go"."""
    project, home = places
    async with repl_in_process(
        project, home, servers={"tasks": tasks(*options)}, script=script, mode=Mode.YOLO
    ) as repl:
        await repl.expect("✓ tasks")
        repl.line("go")
        yield repl


def slow_call(text: str = "build") -> dict[str, Any]:
    return {"tool_calls": [{"name": "mcp__tasks__slow", "arguments": f'{{"text": "{text}"}}'}]}


async def test_jobs_lists_a_running_job_and_cancel_ends_it(places: tuple[Path, Path]) -> None:
    script = [slow_call(), {"text": "It runs in the background."}, {"text": "Noted."}]
    async with jobs_repl(places, script, "--polls", "0") as repl:
        await repl.expect("It runs in the background.")
        repl.line("/jobs")
        await repl.expect(re.compile(r"1\s+running\s+\d+s\s+tasks/slow\s+task task-1"))
        repl.line("/jobs cancel 1")
        await repl.expect("Job 1: cancelled.")
        repl.line("/jobs")
        await repl.expect(re.compile(r"1\s+cancelled"))
        repl.line("/jobs cancel 7")
        await repl.expect("No job 7.")
        repl.line("and now?")
        await repl.expect("Noted.")
        assert repl.llm is not None
        told = repl.llm.requests[1]["messages"][-1]["content"]
        assert "background job: job 1 (MCP task 'task-1')" in told
        delivered = [m["content"] for m in repl.llm.requests[2]["messages"] if m["role"] == "user"]
        assert any(
            "Background job 1 (tasks/slow" in text and "cancelled" in text for text in delivered
        )


async def test_a_finished_job_reaches_the_model_at_the_next_request(
    places: tuple[Path, Path],
) -> None:
    script = [slow_call("x"), {"text": "Started."}, {"text": "It said done."}]
    async with jobs_repl(places, script, "--polls", "1", "--poll-ms", "100") as repl:
        await repl.expect("Started.")
        repl.line("/jobs")
        await repl.expect(re.compile(r"1\s+(running|completed)"))
        assert repl.llm is not None and repl.runtime is not None
        waiter = repl.runtime.mcp.jobs.jobs()[0].waiter
        assert waiter is not None
        await asyncio.wait({waiter})  # the task's result is in
        # The REPL does not hold the turn: the result waits for the next request.
        repl.line("what came of it?")
        await repl.expect("It said done.")
        messages = repl.llm.requests[2]["messages"]
        delivered = [m["content"] for m in messages if m["role"] == "user"]
        assert any("Background job 1" in text and "done: x" in text for text in delivered)


async def test_a_task_id_with_escapes_is_shown_escaped(places: tuple[Path, Path]) -> None:
    script = [slow_call(), {"text": "Started."}]
    async with jobs_repl(places, script, "--mode", "escape", "--polls", "0") as repl:
        await repl.expect("Started.")
        repl.line("/jobs")
        await repl.expect(r"task t\x1b[31m-1\x07\x0d")
        assert "\x1b[31m-1" not in repl.screen.getvalue()
        assert "\x07" not in repl.screen.getvalue()


async def test_ctrl_c_cancels_the_turn_and_the_jobs_it_started(
    places: tuple[Path, Path],
) -> None:
    script = [slow_call(), {"text": "Thinking", "hang": True}, {"text": "Fine."}]
    async with jobs_repl(places, script, "--polls", "0") as repl:
        await repl.expect("background job: job 1")  # the turn goes on: the model hangs
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl+C during a turn: the REPL's SIGINT handler
        await repl.expect("Interrupted.")
        repl.line("/jobs")
        await repl.expect(re.compile(r"1\s+cancelled"))


@pytest.mark.real
async def test_jobs_in_a_real_terminal(tmp_path: Path) -> None:
    """The REPL in a pty with the task server as a process: /jobs shows the escaped task
    id, /jobs cancel ends the job, and leaving leaves no server behind."""
    places = Places(tmp_path / "home", tmp_path / "project", f"jobs-{tmp_path.name}")
    places.home.mkdir()
    places.project.mkdir()
    options = ["--mode", "escape", "--polls", "0", "--log", places.marker]
    server = tasks(*options)
    (places.project / ".paicli").mkdir()
    mcp_json = {"mcpServers": {"tasks": server}}
    (places.project / ".paicli" / "mcp.json").write_text(json.dumps(mcp_json))
    script = [slow_call(), {"text": "Started."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line("go")
        await term.expect("Allow?")
        term.line("y")
        await term.expect("Started.")
        await term.expect(MARK)
        term.line("/jobs")
        await term.expect(r"task t\x1b[31m-1\x07\x0d")
        await term.expect(MARK)
        term.line("/jobs cancel 1")
        await term.expect("Job 1: cancelled.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert "\x1b[31m-1" not in term.raw
    assert "tasks/cancel" in (places.project / places.marker).read_text().splitlines()
    await until(lambda: processes_with(places.marker) == [])  # no event says a process ended
