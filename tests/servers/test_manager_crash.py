"""Stdio servers that crash under paicli's feet, with no `retry` or `restart` configured: the
next call of one of their tools starts them again (after a backoff), and a call in flight at
the crash is repeated once only when the tool says a second run does no harm
(`readOnlyHint` or `idempotentHint`); otherwise the model is told nothing was repeated.
Real processes: the crash is a process exit."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from paicli.audit.log import AuditingToolbox, AuditLog
from paicli.redact import Redactor
from paicli.servers.crashes import crash_backoff
from paicli.servers.manager import ServerManager, ServerState
from paicli.servers.retry import Attempt, listening
from paicli.servers.server_record import ServerRecord
from paicli.tools.base import ToolOutcome
from paicli.tools.mcp.toolbox import McpToolbox
from tests.conftest import SERVER_PROGRAMS
from tests.servers.test_manager import load

HOG = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "hog_server.py")]}


class Run:
    """One manager with the hog server `s`, called through the audit as the agent calls."""

    def __init__(self, tmp_path: Path, manager: ServerManager) -> None:
        self.tmp_path = tmp_path
        self.manager = manager
        self.log = AuditLog(tmp_path / "audit", Redactor())
        self.toolbox = AuditingToolbox(
            McpToolbox(manager, results_dir=tmp_path / "results"), self.log, session_id="x"
        )
        self.heard: list[str] = []

    async def call(self, tool: str, **arguments: Any) -> ToolOutcome:
        spec = next(s for s in self.toolbox.specs() if s.tool == tool)

        def hear(attempt: Attempt) -> None:
            self.heard.append(attempt.line)

        with listening(hear):
            return await self.toolbox.call(spec, arguments)


async def crash_run(
    tmp_path: Path, tool: str, on_change: Any = None
) -> tuple[Run, ToolOutcome, list[int | None]]:
    entries = load(tmp_path, {"s": HOG})
    manager = ServerManager(entries, on_change=on_change)
    await manager.__aenter__()
    await manager.wait_ready()
    run = Run(tmp_path, manager)
    before = manager.get("s").pid
    outcome = await run.call(tool, flag=str(tmp_path / "flag"))
    return run, outcome, [before, manager.get("s").pid]


@pytest.mark.real
@pytest.mark.parametrize("tool", ["crash_once_idempotent", "crash_once_read"])
async def test_a_call_the_tool_says_is_safe_to_repeat_is_repeated_once_after_a_crash(
    tmp_path: Path, tool: str
) -> None:
    async with asyncio.timeout(60):
        run, outcome, pids = await crash_run(tmp_path, tool)
        try:
            assert not outcome.is_error, outcome.text
            assert "ok after crash" in outcome.text
            assert run.heard == ["retry 2/2 after crash"]
            assert pids[1] not in (None, pids[0])  # a new process
            records = run.log.tail(10)
            assert [(r["outcome"], r.get("attempt")) for r in records] == [("error", 1), ("ok", 2)]
        finally:
            await run.manager.aclose()


@pytest.mark.real
async def test_a_call_not_safe_to_repeat_is_not_repeated_and_the_next_call_starts_the_server(
    tmp_path: Path,
) -> None:
    crashed = asyncio.Event()

    def watch(server: Any) -> None:
        if server.state is ServerState.ERROR and server.revive_at is not None:
            crashed.set()

    async with asyncio.timeout(60):
        run, outcome, _ = await crash_run(tmp_path, "crash_once", watch)
        try:
            assert outcome.is_error
            assert "the server crashed during the call" in outcome.text
            assert "the call was not repeated" in outcome.text
            assert "may or may not have run" in outcome.text
            assert run.heard == []
            assert (tmp_path / "flag").exists()  # it did run, once
            server = run.manager.get("s")
            await crashed.wait()
            assert server.state is ServerState.ERROR
            assert "started again at its next call" in (server.failure() or "")
            # Its tools are still offered: the model may call them, which starts it again.
            assert any(s.tool == "echo" for s in run.toolbox.specs())
            due = server.revive_at
            assert due is not None
            assert due <= asyncio.get_running_loop().time() + crash_backoff(1)
            again = await run.call("echo", text="back")
            assert not again.is_error and "back" in again.text
            assert run.manager.get("s").state is ServerState.READY
            # Started again no earlier than its backoff allowed.
            record = cast(ServerRecord, server)
            assert record.started_at is not None and record.ready_after is not None
            assert record.started_at - record.ready_after >= due
        finally:
            await run.manager.aclose()


def test_the_backoff_doubles_from_half_a_second_up_to_thirty() -> None:
    assert [crash_backoff(n) for n in (1, 2, 3, 4, 7, 20)] == [0.5, 1.0, 2.0, 4.0, 30.0, 30.0]
